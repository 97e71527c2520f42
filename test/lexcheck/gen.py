#!/usr/bin/env python3
# test/lexcheck/gen.py SEED COUNT MAXATOMS: COUNT random texts, one a line in
# COPY text format, each up to MAXATOMS pieces drawn from what decides where
# a constant or a quoted name begins and ends in PostgreSQL's scanner
# (quotes of each kind, escapes, dollar quotes, comments, continuations over
# a newline, UESCAPE, numbers, operators).  \v is left out: PostgreSQL 15
# reads it as a character of its own, later versions as white space, and
# querytext.c as white space (on 15 no statement with it outside a constant
# or comment parses).
import random
import sys

seed, count, maxatoms = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
ATOMS = ["'", "'", "''", '"', '""', "\\", "\\'", "$", "$$", "$a$", "$b$", "$1", "--",
         "/*", "*/", "\n", " ", "\t", "\r", "\f", "e'", "E'", "u&'", "U&'", 'U&"', "n'",
         "N'", "b'", "x'", "a", "ab", "1", "1.5", "1e5", ".", ":", ":=", "=", "+", "-",
         "*", "/", "!", "uescape", " UESCAPE '!'", "!0061", "\\0061", "\\x41", "\\u0041",
         "\\101", "password", "secret", ",", "(", ")", ";", "\u00e9", "'\n'",
         "' -- c\n'", "'\n-- c\n'", "' /* c */\n'", "' -- c\n\n'"]


def copy_escape(s):
    return (s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            .replace("\r", "\\r").replace("\f", "\\f"))


for _ in range(count):
    n = rng.randint(1, maxatoms)
    print(copy_escape("".join(rng.choice(ATOMS) for _ in range(n))))
