#!/usr/bin/env python3
"""Checks PowerShell text where no PowerShell can run (the tests have no pwsh).

usage: pwsh_text.py [--variables] FILE...   (FILE '-': stdin)

Every check reads the text as PowerShell's tokenizer does: comments (# and <# #>), strings
('...' with '' inside, "..." with ` escapes and $( ) subexpressions, here-strings @' '@ and
@" "@), and brackets. It reports, one line each, with the line number:
  - a character beyond ASCII (Windows PowerShell 5.1 reads a file without a BOM as ANSI);
  - a string, comment, here-string or subexpression left open at the end;
  - a bracket closed by the wrong one, or left open, or closed without an opening;
  - `setx` used as a command (it cuts PATH at 1024 characters);
  - with --variables: a variable read that no statement assigns, no param() names, no foreach or
    [ref] binds and that is not one of PowerShell's automatic variables (a typo reads $null).
Exit 0 when the text passes, 1 otherwise.
"""
import re
import sys

AUTOMATIC = {
    "_", "args", "true", "false", "null", "PID", "PSScriptRoot", "PSCommandPath", "LASTEXITCODE",
    "ExecutionContext", "Error", "HOME", "Host", "input", "MyInvocation", "PSBoundParameters",
    "PWD", "ErrorActionPreference", "IsWindows", "PSVersionTable", "function", "this",
}
OPEN = {"(": ")", "{": "}", "[": "]"}
CLOSE = {v: k for k, v in OPEN.items()}


class Text:
    def __init__(self, text):
        self.s = text
        self.i = 0
        self.problems = []
        self.stack = []  # (bracket, line)
        self.reads = []  # (name, line)
        self.assigned = set()
        self.commands = []  # (word, line): the first word of each statement

    def line(self, at=None):
        return self.s.count("\n", 0, self.i if at is None else at) + 1

    def problem(self, text, at=None):
        self.problems.append(f"line {self.line(at)}: {text}")

    def peek(self, n=0):
        j = self.i + n
        return self.s[j] if j < len(self.s) else ""

    # A variable after '$' at self.i (pointing past the '$'): records what it reads.
    def variable(self):
        if self.peek() == "{":
            end = self.s.find("}", self.i)
            if end < 0:
                self.problem("${ left open", self.i - 1)
                self.i = len(self.s)
                return
            name = self.s[self.i + 1:end]
            self.i = end + 1
        else:
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(:[A-Za-z_][A-Za-z0-9_]*)?|\?|\^|\$").match(self.s, self.i)
            if not m:
                return
            name = m.group(0)
            self.i = m.end()
        bare = name.rpartition(":")[2]
        if name.split(":")[0].lower() in ("env", "function", "variable"):
            return
        at = self.i
        rest = self.s[at:at + 40]
        if re.match(r"\s*(=(?!=)|\+=|-=)", rest):
            self.assigned.add(bare.lower())
        else:
            self.reads.append((bare, self.line()))

    def string_single(self, quote_at):
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c == "'":
                if self.peek() == "'":
                    self.i += 1
                    continue
                return
        self.problem("a '...' string left open", quote_at)

    def string_double(self, quote_at):
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c == "`":
                self.i += 1
            elif c == '"':
                if self.peek() == '"':
                    self.i += 1
                    continue
                return
            elif c == "$":
                if self.peek() == "(":
                    self.i += 1
                    self.code(until=")", opened_at=self.i - 1)
                else:
                    self.variable()
        self.problem('a "..." string left open', quote_at)

    def here_string(self, quote, start):
        m = re.compile(r"^" + re.escape(quote) + "@", re.M).search(self.s, self.i)
        if not m:
            self.problem(f"a here-string @{quote} left open", start)
            self.i = len(self.s)
            return
        if quote == '"':
            for v in re.finditer(r"\$([A-Za-z_][A-Za-z0-9_]*)", self.s[self.i:m.start()]):
                self.reads.append((v.group(1), self.line(self.i + v.start())))
        self.i = m.end()

    # Code up to the closing `until` (None: the end of the text).
    def code(self, until=None, opened_at=0):
        depth = len(self.stack)
        if until:
            self.stack.append((CLOSE[until], opened_at))
        statement_start = True
        while self.i < len(self.s):
            c = self.s[self.i]
            start = self.i
            self.i += 1
            if c == "#" and (start == 0 or self.s[start - 1] in " \t\n;({}|"):
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
            elif c == "<" and self.peek() == "#":
                end = self.s.find("#>", self.i + 1)
                if end < 0:
                    self.problem("a <# comment left open", start)
                    self.i = len(self.s)
                else:
                    self.i = end + 2
            elif c == "`":
                self.i += 1
            elif c == "@" and self.peek() in ("'", '"') and self.s[self.i + 1:self.i + 2] in ("\n", "\r"):
                q = self.peek()
                self.i += 1
                self.here_string(q, start)
            elif c == "'":
                self.string_single(start)
            elif c == '"':
                self.string_double(start)
            elif c == "$":
                if self.peek() == "(":
                    self.i += 1
                    self.stack.append(("(", start))
                    statement_start = True
                    continue
                self.variable()
            elif c in OPEN:
                self.stack.append((c, start))
                statement_start = True
                continue
            elif c in CLOSE:
                if len(self.stack) <= depth:
                    self.problem(f"'{c}' closes nothing")
                else:
                    opened, _ = self.stack.pop()
                    if OPEN[opened] != c:
                        self.problem(f"'{c}' closes the '{opened}' of line {self.line(_)}")
                    if until and len(self.stack) == depth:
                        return
            elif c in ";\n|":
                statement_start = True
                continue
            elif statement_start and (c.isalpha() or c == "_"):
                m = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*").match(self.s, start)
                self.commands.append((m.group(0), self.line(start)))
                self.i = m.end()
            if not c.isspace():
                statement_start = False
        if until:
            self.problem(f"the '{CLOSE[until]}' here is not closed", opened_at)
            del self.stack[depth:]


def bound_names(text):
    """Names that param(), foreach, [ref] and assignments in any form bind."""
    names = set()
    for m in re.finditer(r"param\s*\(([^)]*)\)", text, re.I | re.S):
        names.update(v.lower() for v in re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", m.group(1)))
    for m in re.finditer(r"foreach\s*\(\s*\$([A-Za-z_][A-Za-z0-9_]*)\s+in\b", text, re.I):
        names.add(m.group(1).lower())
    for m in re.finditer(r"\[ref\]\s*\$([A-Za-z_][A-Za-z0-9_]*)", text, re.I):
        names.add(m.group(1).lower())
    # $a, $b = ... (several at once)
    for m in re.finditer(r"^\s*((?:\$[A-Za-z_][A-Za-z0-9_]*\s*,\s*)+\$[A-Za-z_][A-Za-z0-9_]*)\s*=", text, re.M):
        names.update(v.lower() for v in re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", m.group(1)))
    return names


def check(text, variables):
    t = Text(text)
    for n, line in enumerate(text.split("\n"), 1):
        bad = [ch for ch in line if ord(ch) > 127]
        if bad:
            t.problems.append(f"line {n}: a character beyond ASCII ({bad[0]!r})")
    t.code()
    for opened, at in t.stack:
        t.problem(f"the '{opened}' here is not closed", at)
    for word, line in t.commands:
        if word.lower() in ("setx", "setx.exe"):
            t.problems.append(f"line {line}: setx cuts PATH at 1024 characters; write HKCU\\Environment")
    if variables:
        known = t.assigned | bound_names(text) | {a.lower() for a in AUTOMATIC}
        for name, line in t.reads:
            if name.lower() not in known:
                t.problems.append(f"line {line}: ${name} is read but never set")
    return list(dict.fromkeys(t.problems))


def main():
    args = sys.argv[1:]
    variables = "--variables" in args
    files = [a for a in args if a != "--variables"]
    if not files:
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    failed = False
    for f in files:
        text = sys.stdin.read() if f == "-" else open(f, encoding="utf-8", errors="replace", newline="").read()
        text = text.replace("\r\n", "\n")
        for p in check(text, variables):
            print(f"{f}: {p}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
