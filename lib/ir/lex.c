/* lex.c: the lexer of the textual IR (grammar in docs/ir.md): identifiers, %values and
 * @globals (bare or quoted), numbers (int, float, nan, inf), strings with escapes, hex data and
 * punctuation, with line/column tracking and // comments. It never reads past the buffer and
 * reports malformed tokens at their position. */
#include "lex.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
lex_error(Parser *P, uint32_t line, uint32_t col, const char *fmt, ...)
{
    if (P->failed)
        return;
    P->failed = true;
    Loc l = {.file = P->file, .line = line, .col = col};
    va_list ap;
    va_start(ap, fmt);
    diag_vemit(P->ctx, QDQC_SEV_ERROR, &l, fmt, ap);
    va_end(ap);
}

const char *
lex_tok_desc(Tok t)
{
    switch (t) {
    case T_EOF: return "end of input";
    case T_IDENT: return "identifier";
    case T_VALUE: return "value name";
    case T_GLOBAL: return "'@' name";
    case T_INT: return "integer";
    case T_FLOAT: return "number";
    case T_STRING: return "string";
    case T_HEX: return "hex data";
    case T_SYM: return "symbolic dimension";
    case T_LPAREN: return "'('";
    case T_RPAREN: return "')'";
    case T_LBRACK: return "'['";
    case T_RBRACK: return "']'";
    case T_LBRACE: return "'{'";
    case T_RBRACE: return "'}'";
    case T_LT: return "'<'";
    case T_GT: return "'>'";
    case T_COMMA: return "','";
    case T_COLON: return "':'";
    case T_EQ: return "'='";
    case T_ARROW: return "'->'";
    case T_ERROR: return "invalid token";
    }
    return "token";
}

/* ---- lexer ---- */
static void
advance_char(Parser *P)
{
    if (*P->p == '\n') {
        P->line++;
        P->col = 1;
    } else {
        P->col++;
    }
    P->p++;
}

static bool
is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '$' || c == '-' || c == '/';
}

static bool
is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool
lex_is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}

int
lex_hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decode a quoted string starting at P->p (the opening quote). */
static bool
lex_string(Parser *P)
{
    StrBuf b;
    sb_init(&b);
    advance_char(P); /* opening quote */
    while (P->p < P->end && *P->p != '"') {
        char c = *P->p;
        if (c == '\n') {
            sb_free(&b);
            lex_error(P, P->tline, P->tcol, "unterminated string");
            return false;
        }
        if (c == '\\') {
            advance_char(P);
            if (P->p >= P->end)
                break;
            char e = *P->p;
            if (e == '"' || e == '\\') {
                sb_putc(&b, e);
                advance_char(P);
            } else if (e == 'n') {
                sb_putc(&b, '\n');
                advance_char(P);
            } else if (e == 'x' && P->end - P->p >= 3 && lex_hexval(P->p[1]) >= 0 &&
                       lex_hexval(P->p[2]) >= 0) {
                char v = (char)(lex_hexval(P->p[1]) * 16 + lex_hexval(P->p[2]));
                if (v == 0) {
                    sb_free(&b);
                    lex_error(P, P->line, P->col, "string contains a NUL character");
                    return false;
                }
                sb_putc(&b, v);
                advance_char(P);
                advance_char(P);
                advance_char(P);
            } else {
                sb_free(&b);
                lex_error(P, P->line, P->col, "invalid escape sequence in string");
                return false;
            }
            continue;
        }
        if (c == 0) {
            sb_free(&b);
            lex_error(P, P->line, P->col, "string contains a NUL character");
            return false;
        }
        sb_putc(&b, c);
        advance_char(P);
    }
    if (P->p >= P->end) {
        sb_free(&b);
        lex_error(P, P->tline, P->tcol, "unterminated string");
        return false;
    }
    advance_char(P); /* closing quote */
    free(P->sval);
    P->sval = sb_take(&b);
    return true;
}

static void
skip_space_and_comments(Parser *P)
{
    for (;;) {
        while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' ||
                                 *P->p == '\r'))
            advance_char(P);
        if (P->end - P->p >= 2 && P->p[0] == '/' && P->p[1] == '/') {
            while (P->p < P->end && *P->p != '\n')
                advance_char(P);
            continue;
        }
        break;
    }
}

/* one-character punctuation, or T_EOF when c is none */
static Tok
punct_tok(char c)
{
    switch (c) {
    case '(': return T_LPAREN;
    case ')': return T_RPAREN;
    case '[': return T_LBRACK;
    case ']': return T_RBRACK;
    case '{': return T_LBRACE;
    case '}': return T_RBRACE;
    case '<': return T_LT;
    case '>': return T_GT;
    case ',': return T_COMMA;
    case ':': return T_COLON;
    case '=': return T_EQ;
    default: return T_EOF;
    }
}

/* '%' or '@' (the current character c) and a bare or quoted name: T_VALUE or T_GLOBAL.
 * false (with T_ERROR) on a malformed name. */
static bool
lex_name(Parser *P, char c)
{
    advance_char(P);
    Tok kind = c == '%' ? T_VALUE : T_GLOBAL;
    if (P->p < P->end && *P->p == '"') {
        if (!lex_string(P)) {
            P->tok = T_ERROR;
            return false;
        }
        if (!*P->sval) {
            lex_error(P, P->tline, P->tcol, "empty name");
            P->tok = T_ERROR;
            return false;
        }
    } else {
        const char *s = P->p;
        while (P->p < P->end && is_name_char(*P->p))
            advance_char(P);
        if (P->p == s) {
            lex_error(P, P->tline, P->tcol, "expected a name after '%c'", c);
            P->tok = T_ERROR;
            return false;
        }
        free(P->sval);
        P->sval = xstrndup(s, (size_t)(P->p - s));
    }
    P->tok = kind;
    return true;
}

/* a number starting with the current character c (a digit or sign): T_INT, T_FLOAT (also
 * signed nan and inf). false (with T_ERROR) on a malformed number. */
static bool
lex_number(Parser *P, char c)
{
    const char *s = P->p;
    if (c == '-' || c == '+')
        advance_char(P);
    /* nan / inf with a sign */
    if (P->end - P->p >= 3 && (strncmp(P->p, "nan", 3) == 0 || strncmp(P->p, "inf", 3) == 0)) {
        bool isnan_ = P->p[0] == 'n';
        advance_char(P);
        advance_char(P);
        advance_char(P);
        P->tok = T_FLOAT;
        P->fval = isnan_ ? (c == '-' ? -NAN : NAN) : (c == '-' ? -INFINITY : INFINITY);
        return true;
    }
    bool isfloat = false;
    while (P->p < P->end && ((*P->p >= '0' && *P->p <= '9') || *P->p == '.' || *P->p == 'e' ||
                             *P->p == 'E' ||
                             ((*P->p == '-' || *P->p == '+') &&
                              (P->p[-1] == 'e' || P->p[-1] == 'E')))) {
        if (*P->p == '.' || *P->p == 'e' || *P->p == 'E')
            isfloat = true;
        advance_char(P);
    }
    size_t n = (size_t)(P->p - s);
    if (n > 64 || (n == 1 && (c == '-' || c == '+'))) {
        lex_error(P, P->tline, P->tcol, "invalid number");
        P->tok = T_ERROR;
        return false;
    }
    char buf[72];
    memcpy(buf, s, n);
    buf[n] = 0;
    char *endp;
    errno = 0;
    if (isfloat) {
        P->fval = strtod(buf, &endp);
        P->tok = T_FLOAT;
    } else {
        P->ival = strtoll(buf, &endp, 10);
        P->fval = (double)P->ival;
        P->tok = T_INT;
    }
    if (*endp || (errno == ERANGE && !isfloat)) {
        lex_error(P, P->tline, P->tcol, "invalid number '%s'", buf);
        P->tok = T_ERROR;
        return false;
    }
    return true;
}

/* '?' and a symbolic dimension: a name (?batch) or a parenthesised expression on one line
 * (?(2*seq + 1)); dims.c parses the text */
static bool
lex_sym(Parser *P)
{
    advance_char(P);
    if (P->p < P->end && *P->p == '(') {
        int depth = 0;
        do {
            char c = *P->p;
            if (c == '\n' || c == '\r')
                break;
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            advance_char(P);
        } while (depth > 0 && P->p < P->end);
        if (depth != 0) {
            lex_error(P, P->tline, P->tcol, "unbalanced parentheses in a symbolic dimension");
            P->tok = T_ERROR;
            return false;
        }
    } else if (P->p < P->end && ir_dim_name_char(*P->p, true)) {
        while (P->p < P->end && ir_dim_name_char(*P->p, false))
            advance_char(P);
    } else {
        lex_error(P, P->tline, P->tcol, "expected a name or '(' after '?'");
        P->tok = T_ERROR;
        return false;
    }
    P->tok = T_SYM;
    return true;
}

/* an identifier; bare nan / inf are float literals */
static void
lex_ident(Parser *P)
{
    const char *start = P->p;
    while (P->p < P->end && lex_is_ident_char(*P->p))
        advance_char(P);
    P->tok = T_IDENT;
    size_t n = (size_t)(P->p - start);
    if ((n == 3 && strncmp(start, "nan", 3) == 0)) {
        P->tok = T_FLOAT;
        P->fval = NAN;
    } else if (n == 3 && strncmp(start, "inf", 3) == 0) {
        P->tok = T_FLOAT;
        P->fval = INFINITY;
    }
}

void
lex_next(Parser *P)
{
    if (P->failed) {
        P->tok = T_ERROR;
        return;
    }
    skip_space_and_comments(P);
    P->tstart = P->p;
    P->tline = P->line;
    P->tcol = P->col;
    if (P->p >= P->end) {
        P->tok = T_EOF;
        P->tlen = 0;
        return;
    }
    char c = *P->p;
    const char *start = P->p;
    Tok punct = punct_tok(c);
    if (punct != T_EOF) {
        P->tok = punct;
        advance_char(P);
    } else if (c == '"') {
        if (!lex_string(P)) {
            P->tok = T_ERROR;
            return;
        }
        P->tok = T_STRING;
    } else if (c == '%' || c == '@') {
        if (!lex_name(P, c))
            return;
    } else if (c == '?') {
        if (!lex_sym(P))
            return;
    } else if (c == '-' && P->end - P->p >= 2 && P->p[1] == '>') {
        advance_char(P);
        advance_char(P);
        P->tok = T_ARROW;
    } else if (c == '0' && P->end - P->p >= 2 && (P->p[1] == 'x' || P->p[1] == 'X')) {
        advance_char(P);
        advance_char(P);
        while (P->p < P->end && lex_hexval(*P->p) >= 0)
            advance_char(P);
        P->tok = T_HEX;
    } else if ((c >= '0' && c <= '9') || c == '-' || c == '+') {
        if (!lex_number(P, c))
            return;
    } else if (is_ident_start(c)) {
        lex_ident(P);
    } else {
        if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
            lex_error(P, P->tline, P->tcol, "unexpected character '%c'", c);
        else
            lex_error(P, P->tline, P->tcol, "unexpected byte 0x%02x", (unsigned char)c);
        P->tok = T_ERROR;
        return;
    }
    P->tlen = (size_t)(P->p - start);
}

bool
lex_tok_is(Parser *P, const char *s)
{
    return P->tok == T_IDENT && strlen(s) == P->tlen && memcmp(P->tstart, s, P->tlen) == 0;
}

bool
lex_expect(Parser *P, Tok t, const char *what)
{
    if (P->tok != t) {
        if (!P->failed)
            ERR("expected %s, got %s", what ? what : lex_tok_desc(t), lex_tok_desc(P->tok));
        return false;
    }
    lex_next(P);
    return true;
}

bool
lex_accept(Parser *P, Tok t)
{
    if (P->tok == t) {
        lex_next(P);
        return true;
    }
    return false;
}
