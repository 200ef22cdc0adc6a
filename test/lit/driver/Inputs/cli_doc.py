"""cli_doc.py: docs/cli.md documents every option the tools' --help texts name, and no other.

usage: cli_doc.py DOC QDQC QDQC_FUZZ

Reads `QDQC --help` and `QDQC CMD --help` for every command its usage lines name (`qdqc
opt FILE ...`, `qdqc run MODEL ...`), and `QDQC_FUZZ --help`. Each option of a help text
(`--name`, and the short options that begin an option line: `-o`, `-v`, `-Rpass`) must appear
in DOC, the qdqc ones before its `## qdqc-fuzz` heading and the fuzzer's after it; each
command needs a heading `qdqc CMD`. Each long option DOC names must appear in a help text of
its part. Prints one line per finding and exits 1 if there is any, else prints a summary.
"""
import re
import subprocess
import sys

LONG = re.compile(r"(?<![\w-])(--[A-Za-z][A-Za-z0-9-]*)")
SHORT_AT_LINE = re.compile(r"^\s+(-[A-Za-z][A-Za-z0-9]*)\b", re.M)


def help_text(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"cli_doc: {' '.join(argv)} exited {p.returncode}:\n{p.stdout}")
    return p.stdout


def options(text):
    return set(LONG.findall(text)) | set(SHORT_AT_LINE.findall(text))


def documented(opt, doc):
    return re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", doc) is not None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    doc_path, qdqc, fuzz = sys.argv[1:]
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    cut = re.search(r"^## qdqc-fuzz\b", doc, re.M)
    if not cut:
        sys.exit(f"cli_doc: {doc_path} has no '## qdqc-fuzz' section")
    doc_qdqc, doc_fuzz = doc[:cut.start()], doc[cut.start():]

    top = help_text([qdqc, "--help"])
    commands = sorted(set(re.findall(r"^\s*(?:usage:\s*)?qdqc ([a-z]+) ", top, re.M)))
    texts = {"qdqc --help": top}
    for c in commands:
        texts[f"qdqc {c} --help"] = help_text([qdqc, c, "--help"])
    fuzz_text = help_text([fuzz, "--help"])

    problems = []
    for c in commands:
        if not re.search(r"^#+ .*`qdqc " + c + r"\b", doc_qdqc, re.M):
            problems.append(f"command not documented in {doc_path}: qdqc {c} (no heading)")
    qdqc_opts = {}
    for where, text in texts.items():
        for o in options(text):
            qdqc_opts.setdefault(o, where)
    for o, where in sorted(qdqc_opts.items()):
        if not documented(o, doc_qdqc):
            problems.append(f"option not documented in {doc_path}: {o} (from {where})")
    fuzz_opts = options(fuzz_text)
    for o in sorted(fuzz_opts):
        if not documented(o, doc_fuzz):
            problems.append(f"option not documented in {doc_path} (qdqc-fuzz): {o}")
    for o in sorted(set(LONG.findall(doc_qdqc)) - set(qdqc_opts)):
        problems.append(f"option documented in {doc_path} but in no qdqc --help: {o}")
    for o in sorted(set(LONG.findall(doc_fuzz)) - fuzz_opts):
        problems.append(f"option documented in {doc_path} (qdqc-fuzz) but not in its --help: {o}")

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"cli_doc: ok: {len(commands)} commands ({', '.join(commands)}), "
          f"{len(qdqc_opts)} qdqc options, {len(fuzz_opts)} qdqc-fuzz options documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
