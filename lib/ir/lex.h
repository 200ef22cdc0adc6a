/* lex.h: the lexer of the textual IR and the parser state it shares with parse.c (internal).
 * Tokens carry their line and column; every error is reported once, at the offending token,
 * and stops the parse (P->failed). */
#ifndef QDQC_IR_LEX_H
#define QDQC_IR_LEX_H

#include "ir.h"

typedef enum Tok {
    T_EOF, T_IDENT, T_VALUE, T_GLOBAL, T_INT, T_FLOAT, T_STRING, T_HEX,
    T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE, T_LT, T_GT,
    T_COMMA, T_COLON, T_EQ, T_ARROW, T_SYM, T_ERROR
} Tok;

typedef struct Parser {
    qdqc_context *ctx;
    Module *m;
    const char *src, *end, *p;
    const char *file;
    uint32_t line, col;
    /* current token (T_SYM: '?' and a symbolic dimension, tstart..tlen, parsed by the caller) */
    Tok tok;
    const char *tstart;
    size_t tlen;
    uint32_t tline, tcol;
    char *sval;   /* decoded string / name (owned) */
    int64_t ival;
    double fval;
    bool failed;
    /* names defined so far: interned id -> ValueId (dense array over interner ids) */
    uint32_t *defs;
    uint32_t ndefs;
} Parser;

/* Report an error at line:col (only the first error of a parse is reported). */
void lex_error(Parser *P, uint32_t line, uint32_t col, const char *fmt, ...) QDQC_PRINTF(4, 5);
#define ERR(...) lex_error(P, P->tline, P->tcol, __VA_ARGS__)
const char *lex_tok_desc(Tok t);
void lex_next(Parser *P);                       /* advance to the next token */
bool lex_tok_is(Parser *P, const char *ident);  /* the current token is this identifier */
bool lex_expect(Parser *P, Tok t, const char *what); /* consume t or report "expected ..." */
bool lex_accept(Parser *P, Tok t);              /* consume t if it is next */
int lex_hexval(char c);                         /* -1 if not a hex digit */
bool lex_is_ident_char(char c);

#endif
