"""Builds the tokenizer parity corpus at test time: deterministic, generated
text of many kinds (no downloads) plus the hand-written snippets of
corpus_snippets.txt. build_corpus(seed) returns a list of documents."""

import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

WORDS = """the of and to in is that it was for on are as with his they at be this from have or by one had not
but what all were when we there can an your which their said if do will each about how up out them then she many
some so these would other into has more her two like him see time could no make than first been its who now people
my made over did down only way find use may water long little very after words called just where most know get
through back much before go good new write our used me man too any day same right look think also around another
came come work three word must because does part even place well such here take why things help put years different
away again off went old number great tell men say small every found still between name should home big give air
line set own under read last never us left end along while might next sound below saw something thought both few
those always looked show large often together asked house don't world going want school important until form food
keep children feet land side without boy once animals life enough took sometimes four head above kind began almost
live page got earth need far hand high year mother light parts country father let night following picture being
study second eyes soon times story boys since white days paper hard near sentence better best across during today
others however sure means knew it's try told young miles sun ways thing whole hear example heard several change
answer room sea against top turned learn point city play toward five using himself usually""".split()

CONTRACTIONS = ["don't", "I'm", "you're", "we've", "they'll", "she'd", "it's", "IT'S", "Don'T", "I'LL", "we'Re",
                "o'clock", "rock'n'roll", "'tis", "y'all", "isn't", "can't", "he's", "'s", "'ll"]

EMOJI = ["😀", "😂", "🥲", "👍", "👍🏽", "👨‍👩‍👧‍👦", "👩🏾‍🔬", "🏳️‍🌈", "🏴‍☠️", "🇫🇷", "🇯🇵", "🇺🇸", "1️⃣", "#️⃣",
         "❤️", "❤", "☺️", "✌🏻", "🧑‍🤝‍🧑", "🐕‍🦺", "👁️‍🗨️", "🫶🏼", "🤷‍♀️", "🙇🏿‍♂️", "⌚", "©️", "™", "🀄", "🎌"]

SPACES = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2002", "\u2003", "\u2009", "\u200a", "\u3000", "\u2028",
          "\u2029", "\u0085", "\u000b", "\u000c", "\u200b", "\u180e", "\ufeff", "\u202f", "\u205f"]

SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "<file_sep>", "<filename>",
            "<gh_stars>", "<jupyter_code>", "<empty_output>"]

# Gemma's control and user-defined token texts (dialect="gemma").
GEMMA_SPECIALS = ["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>", "<unk>", "<mask>", "<unused0>",
                  "<unused99>", "[multimodal]", "<start_of_image>", "<end_of_image>", "<table>", "</td>", "<h1>",
                  "<blockquote>", "</div>"]


def rand_chars(rng, lo, hi, n):
    return "".join(chr(rng.randint(lo, hi)) for _ in range(n))


def prose(rng):
    out = []
    for _ in range(rng.randint(1, 6)):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 20))]
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words)), rng.choice(CONTRACTIONS))
        s = " ".join(words)
        s = s[0].upper() + s[1:]
        if rng.random() < 0.3:
            s = s.replace(" ", ", ", 1)
        if rng.random() < 0.1:
            s = s.upper()
        if rng.random() < 0.2:
            s = "\u201c" + s + "\u201d"
        out.append(s + rng.choice([".", "!", "?", "...", " \u2014", ";", ":"]))
    return " ".join(out) + rng.choice(["\n", "\n\n", " ", ""])


def ident(rng):
    return rng.choice(WORDS).replace("'", "") + rng.choice(["", "_" + rng.choice(WORDS).replace("'", ""),
                                                             str(rng.randint(0, 99)), "Count", "ID"])


def code(rng):
    a, b, n = ident(rng), ident(rng), rng.randint(0, 100000)
    ind = rng.choice(["    ", "\t", "  ", "        "])
    snippets = [
        f"def {a}({b}, n={n}):\n{ind}if {b} is None:\n{ind}{ind}return []\n{ind}return [x ** 2 for x in range(n)]\n",
        f"#include <vector>\nint {a}(const std::vector<int>& {b}) {{\n{ind}int s = 0;\n"
        f"{ind}for (int i = 0; i < {n}; ++i) s += {b}[i];  // sum\n{ind}return s;\n}}\n",
        f"const {a} = async ({b}) => {{\n{ind}const r = await fetch(`/api/{b}?n=${{{n}}}`);\n"
        f"{ind}return r.json();\n}};\r\n",
        f"fn {a}<'a>({b}: &'a str) -> Option<usize> {{\n{ind}{b}.find(\"{n}\").map(|i| i + 1)\n}}\n",
        f"func {a}({b} []string) (int, error) {{\n\tif len({b}) == 0 {{\n\t\treturn 0, errors.New(\"empty\")\n\t}}\n"
        f"\treturn {n}, nil\n}}\n",
        f"SELECT {a}, COUNT(*) AS c FROM {b} WHERE id >= {n} GROUP BY {a} HAVING c > 1 ORDER BY c DESC;\n",
        f"<div class=\"{a}\" data-n=\"{n}\"><p>{b} &amp; &lt;tag&gt;</p></div>\n",
        f'{{"{a}": [{n}, {n / 7:.5f}, true, null], "{b}": {{"k": "v\\n\\t\\u00e9"}}}}\n',
        f"#!/bin/bash\nfor f in *.{a}; do\n{ind}echo \"$f\" | grep -E '^[0-9]+$' && rm -rf \"${{f%.*}}\"\ndone\n",
        f"x{n}={n}>>{n % 7}|~{n}&0xFF;;;;  /* {a} */ \\\\ @@ -{n},7 +{n},8 @@\n",
    ]
    return rng.choice(snippets)


def number(rng):
    n = rng.randint(0, 10 ** rng.randint(1, 30))
    forms = [str(n), f"{n:,}", f"-{n}.{rng.randint(0, 999):03d}", f"{rng.random():.12f}", f"{rng.random():e}",
             f"0x{n:X}", f"{rng.randint(1900, 2100)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
             f"{rng.randint(1, 28)}/{rng.randint(1, 12)}/{rng.randint(0, 99):02d}",
             f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999)}",
             f"2024-11-29T{rng.randint(0, 23):02d}:00:00Z", f"+1 (555) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
             f"v{rng.randint(0, 9)}.{rng.randint(0, 99)}.{rng.randint(0, 999)}-rc{rng.randint(1, 5)}",
             f"{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}",
             f"{rng.randint(0, 100)}%", f"${n % 100000:,}.{rng.randint(0, 99):02d}", f"\u20ac{n % 1000},{rng.randint(0, 99)}",
             rand_chars(rng, 0x660, 0x669, rng.randint(1, 8)), rand_chars(rng, 0x966, 0x96F, rng.randint(1, 8)),
             rand_chars(rng, 0xFF10, 0xFF19, rng.randint(1, 6)), "\u00b2\u00b3\u00b9\u00bd\u00bc\u2153\u2167\u2460\u2469",
             f"{n}th", f"x{n}y{n % 10}z", f"{n}{n}{n}"]
    return rng.choice(forms) + rng.choice([" ", ", ", "\n", "", "; "])


def whitespace(rng):
    parts = []
    for _ in range(rng.randint(1, 8)):
        sp = rng.choice(SPACES)
        parts.append(sp * rng.choice([1, 1, 2, 3, 7, 16, 64, 300]) + rng.choice(WORDS + ["", "", "x", "1", "."]))
    if rng.random() < 0.05:
        parts.append(" " * rng.randint(1000, 4000) + "\t" * rng.randint(0, 50) + "\n" * rng.randint(0, 30))
    return "".join(parts)


def emoji(rng):
    return "".join(rng.choice(EMOJI) + rng.choice(["", " ", "", rng.choice(WORDS), "!"]) for _ in range(rng.randint(1, 10)))


def scripts(rng):
    pick = rng.randrange(9)
    n = rng.randint(2, 40)
    if pick == 0:  # common CJK ideographs with CJK punctuation
        return rand_chars(rng, 0x4E00, 0x9FA5, n) + rng.choice(["\u3002", "\uff0c", "\u3001", " ", "\n"])
    if pick == 1:  # kana
        return rand_chars(rng, 0x3041, 0x3093, n) + rand_chars(rng, 0x30A1, 0x30F6, n // 2) + "\u3002"
    if pick == 2:  # hangul syllables, spaced
        return " ".join(rand_chars(rng, 0xAC00, 0xD7A3, rng.randint(1, 5)) for _ in range(n // 3 + 1)) + "."
    if pick == 3:  # Arabic letters with harakat
        return " ".join("".join(chr(rng.randint(0x628, 0x64A)) + (chr(rng.randint(0x64B, 0x652)) if rng.random() < 0.4
                                                                   else "") for _ in range(rng.randint(2, 7)))
                        for _ in range(n // 4 + 1)) + "\u061f "
    if pick == 4:  # Hebrew with points
        return " ".join("".join(chr(rng.randint(0x5D0, 0x5EA)) + (chr(rng.randint(0x5B0, 0x5BC)) if rng.random() < 0.3
                                                                   else "") for _ in range(rng.randint(2, 6)))
                        for _ in range(n // 4 + 1)) + ". "
    if pick == 5:  # Devanagari consonant + matra / virama clusters
        return " ".join("".join(chr(rng.randint(0x915, 0x939)) + rng.choice(["", "\u093e", "\u093f", "\u0940", "\u094d",
                                                                             "\u0947", "\u094b", "\u0902"])
                                for _ in range(rng.randint(2, 6))) for _ in range(n // 4 + 1)) + "\u0964 "
    if pick == 6:  # Latin with combining marks
        return "".join(rng.choice("aeiouxyzAEIOU") + "".join(chr(rng.randint(0x300, 0x36F))
                                                             for _ in range(rng.randint(0, 3))) for _ in range(n))
    if pick == 7:  # Greek, Cyrillic, Thai, math alphanumerics
        return (rand_chars(rng, 0x3B1, 0x3C9, n // 3) + " " + rand_chars(rng, 0x430, 0x44F, n // 3) + " " +
                rand_chars(rng, 0xE01, 0xE2E, n // 3) + " " + rand_chars(rng, 0x1D400, 0x1D433, 4) + " ")
    return "".join(chr(rng.randint(0x21, 0x7E)) for _ in range(n)) + rand_chars(rng, 0xA1, 0xFF, 5) + "\n"


def specials(rng):
    turns = []
    for _ in range(rng.randint(1, 4)):
        role = rng.choice(["system", "user", "assistant"])
        turns.append(f"<|im_start|>{role}\n{prose(rng).strip()}<|im_end|>\n")
    extra = [rng.choice(SPECIALS) + rng.choice(WORDS), rng.choice(WORDS) + rng.choice(SPECIALS),
             "<|im_start", "<|im_end|", "< |im_start|>", "<<|im_end|>>", "<|endoftext|><|endoftext|>",
             " <|im_start|> ", "\n<filename>src/main.rs\n", "<repo_name>" + ident(rng)]
    return "".join(turns) + rng.choice(extra)


def specials_gemma(rng):
    turns = []
    for _ in range(rng.randint(1, 4)):
        role = rng.choice(["user", "model"])
        turns.append(f"<start_of_turn>{role}\n{prose(rng).strip()}<end_of_turn>\n")
    extra = [rng.choice(GEMMA_SPECIALS) + rng.choice(WORDS), rng.choice(WORDS) + rng.choice(GEMMA_SPECIALS),
             "<start_of_turn", "<end_of_turn", "< start_of_turn>", "<<end_of_turn>>", "<bos><bos>",
             " <start_of_turn> ", "<unused12345>", "<unused" + str(rng.randint(0, 7000)) + ">", "<0x41><0x0A>",
             "<b" + "os>", "<table><tr><td>" + ident(rng) + "</td></tr></table>"]
    return "".join(turns) + rng.choice(extra)


def control_chars(rng):
    return "".join(rng.choice(["\x00", "\x01", "\x1b[31m", "\x7f", "\x1f", "\u200f", "\u200e", "\u2066", "\ue000",
                               "\ufffd", "\u00ad"]) + rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


KINDS = [(prose, 30), (code, 20), (number, 10), (whitespace, 8), (emoji, 6), (scripts, 16), (specials, 6),
         (control_chars, 2)]


def snippets():
    with open(os.path.join(HERE, "corpus_snippets.txt"), encoding="utf-8") as f:
        return [line.rstrip("\n").replace("\\u0301", "\u0301") for line in f if line.strip()]


def build_corpus(seed=20241129, min_bytes=1_100_000, dialect="chatml"):
    """Documents of 1..~40 mixed pieces; their UTF-8 size adds up to >= min_bytes.
    dialect "gemma" writes Gemma's special-token texts where "chatml" writes ChatML's."""
    rng = random.Random(seed)
    swap = {specials: specials_gemma} if dialect == "gemma" else {}
    fns = [swap.get(f, f) for f, w in KINDS for _ in range(w)]
    fixed = snippets()
    docs, size = list(fixed), sum(len(s.encode()) for s in fixed)
    while size < min_bytes:
        doc = "".join(rng.choice(fns)(rng) for _ in range(rng.randint(1, 40)))
        if rng.random() < 0.2:
            doc = rng.choice(fixed) + rng.choice(["\n", " ", ""]) + doc
        docs.append(doc)
        size += len(doc.encode())
    return docs
