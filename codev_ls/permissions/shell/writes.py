"""The files a command writes through its own arguments (``cp a .git/hooks/x``).

Redirections (``> f``) and ``tee`` are writes the permission system judges on
their own, like an Edit. A command that writes files by its arguments — cp,
mv, dd, sed -i, curl -o, tar x, ... — needs an allow rule for the *command*
(``Bash(cp:*)``); this module says which files that command writes, so that
the rule cannot be used to reach a protected path (``.git/``, ``.codev/``,
``.mcp.json``, shell rc files) or a path outside the workspace without asking.

Each target is a :class:`WriteTarget`: a word naming the file (or a folder the
command fills with files whose names only the run knows: ``tar x``, ``cp -r
dir/. dest``), or a reason why the target is not known before the command
runs (``curl -J`` takes the name from the server). Over-matching only ever
asks; a writer missing here falls back to the generic rule: values of
``-o``/``--output``-like options, and every path argument, are checked for
protected and outside paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from codev_ls.permissions.shell.parse import (
    SimpleCommand,
    _sed_scripts,
    _Word,
    name_set,
    sed_script_effects,
)
from codev_ls.permissions.shell.readonly import long_option_matches


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """A file (or, with ``into``, a folder filled with files) a command writes."""

    word: str = ""
    # The word is only known at run time (`cp x "$DEST"`).
    dynamic: bool = False
    # The command writes files *inside* this folder whose names only the run knows.
    into: bool = False
    # Not empty: the target cannot be known before the command runs, and why.
    unknown: str = ""


# Options taking a value, per writer (the value is not an operand).
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "cp": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "mv": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "install": frozenset(
        {
            "-t",
            "--target-directory",
            "-S",
            "--suffix",
            "-m",
            "--mode",
            "-o",
            "--owner",
            "-g",
            "--group",
            "--strip-program",
        }
    ),
    "ln": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "touch": frozenset({"-d", "--date", "-t", "-r", "--reference"}),
    "truncate": frozenset({"-s", "--size", "-r", "--reference"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "shred": frozenset({"-n", "--iterations", "-s", "--size", "--random-source"}),
    "split": frozenset(
        {
            "-a",
            "--suffix-length",
            "-b",
            "--bytes",
            "-C",
            "--line-bytes",
            "-l",
            "--lines",
            "-n",
            "--number",
            "-t",
            "--separator",
            "--additional-suffix",
            "--filter",
        }
    ),
    "rsync": frozenset(
        {
            "-e",
            "--rsh",
            "--rsync-path",
            "--exclude",
            "--include",
            "-f",
            "--filter",
            "--files-from",
            "--exclude-from",
            "--include-from",
        }
    ),
    "scp": frozenset({"-F", "-i", "-J", "-l", "-o", "-P", "-S", "-c", "-D", "-X"}),
    "chmod": frozenset({"--reference"}),
    "chown": frozenset({"--reference", "--from"}),
    "chgrp": frozenset({"--reference"}),
}
# Every operand is written (or removed, or has its metadata changed).
_ALL_OPERANDS = name_set(
    "rm rmdir unlink shred touch truncate mkdir mkfifo mknod chattr setfacl tee chmod chown "
    "chgrp srm wipe"
)
_COPIERS = name_set("cp install ln link")
_COMPRESSORS = {
    "gzip": ".gz",
    "gunzip": ".gz",
    "bzip2": ".bz2",
    "bunzip2": ".bz2",
    "xz": ".xz",
    "unxz": ".xz",
    "lzma": ".lzma",
    "zstd": ".zst",
    "unzstd": ".zst",
    "lz4": ".lz4",
    "compress": ".Z",
    "uncompress": ".Z",
}
# Generic output options: a command not known here that has one writes its value.
_OUTPUT_OPTIONS = (
    "--output",
    "--out",
    "--outfile",
    "--out-file",
    "--output-file",
    "--outdir",
    "--out-dir",
    "--output-dir",
    "--output-directory",
    "--log-file",
    "--logfile",
    "--target-directory",
)
_SINGLE_DASH_OUTPUT = frozenset({"-out", "-o", "-outdir", "-output"})


def write_targets(cmd: SimpleCommand) -> list[WriteTarget]:
    """The files ``cmd`` writes by its arguments (redirections are not included)."""
    if cmd.assignment_only or not cmd.argv or 0 in cmd.dynamic:
        return []
    name = os.path.basename(cmd.argv[0])
    words = [(w, i in cmd.dynamic) for i, w in enumerate(cmd.argv)]
    special = _SPECIAL.get(name)
    out = special(cmd, words) if special is not None else []
    if name in _ALL_OPERANDS:
        operands = _operands(words, _VALUE_OPTIONS.get(name, frozenset()))
        if name in ("chmod", "chown", "chgrp") and not _has(words, "--reference"):
            operands = operands[1:]  # the mode or owner
        out += [WriteTarget(w, d) for w, d in operands]
    elif name in _COMPRESSORS:
        out += _compressor(name, words)
    out += _output_options(words)
    return out


def _has(words: list[tuple[str, bool]], option: str, short: str = "") -> bool:
    for w, dynamic in words[1:]:
        if dynamic:
            continue
        if long_option_matches(w, option):
            return True
        if (
            short
            and w.startswith("-")
            and not w.startswith("--")
            and any(c in w[1:] for c in short)
        ):
            return True
    return False


def _operands(words: list[tuple[str, bool]], with_value: frozenset[str]) -> list[tuple[str, bool]]:
    """The words that are not options (nor option values); ``--`` ends the options."""
    out: list[tuple[str, bool]] = []
    skip = False
    done = False
    for w, dynamic in words[1:]:
        if skip:
            skip = False
            continue
        if done or dynamic:
            out.append((w, dynamic))
            continue
        if w == "--":
            done = True
            continue
        if w.startswith("-") and len(w) > 1:
            key = w.split("=", 1)[0]
            if "=" not in w and (key in with_value or (len(w) == 2 and w in with_value)):
                skip = True
            continue
        out.append((w, dynamic))
    return out


def _option_value(
    words: list[tuple[str, bool]], long: str, short: str = ""
) -> list[tuple[str, bool]]:
    """The values given to an option (``-o F``, ``-oF``, ``--output=F``, ``--output F``)."""
    out: list[tuple[str, bool]] = []
    for i, (w, dynamic) in enumerate(words[1:], 1):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if dynamic:
            continue
        if long and long_option_matches(w, long):
            if "=" in w:
                out.append((w.split("=", 1)[1], False))
            elif nxt is not None:
                out.append(nxt)
        elif short and w.startswith("-") and not w.startswith("--") and len(w) > 1:
            at = w.find(short, 1)
            if at != -1:
                rest = w[at + 1 :]
                if rest:
                    out.append((rest, False))
                elif nxt is not None:
                    out.append(nxt)
    return out


def _targets(values: list[tuple[str, bool]]) -> list[WriteTarget]:
    return [WriteTarget(w, d) for w, d in values if w != "-"]


def _output_options(words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """``--output F``-like options of any command (``gcc -o F``, ``openssl -out F``)."""
    out: list[WriteTarget] = []
    for i, (w, dynamic) in enumerate(words[1:], 1):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if dynamic:
            continue
        if w.startswith("--"):
            key = w.split("=", 1)[0]
            if key in _OUTPUT_OPTIONS:
                if "=" in w:
                    out.append(WriteTarget(w.split("=", 1)[1]))
                elif nxt is not None:
                    out.append(WriteTarget(*nxt))
        elif w in _SINGLE_DASH_OUTPUT and nxt is not None:
            out.append(WriteTarget(*nxt))
        elif w.startswith("-o") and len(w) > 2 and "/" in w:
            out.append(WriteTarget(w[2:]))  # `-o/path` attached
    return [t for t in out if t.word != "-"]


# --------------------------------------------------------------------------- the writers


def _copy(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """cp / mv / install / ln: the destination (and, for mv, the sources it removes)."""
    name = os.path.basename(cmd.argv[0])
    with_value = _VALUE_OPTIONS.get(name, _VALUE_OPTIONS["cp"])
    operands = _operands(words, with_value)
    target_dir = _option_value(words, "--target-directory", "t")
    recursive = (
        name in ("mv", "rsync") or _has(words, "--recursive", "rR") or _has(words, "--archive", "a")
    )
    out: list[WriteTarget] = []
    if name == "mv":
        out += [WriteTarget(w, d) for w, d in operands]  # the sources are removed
    if name == "install" and _has(words, "--directory", "d"):
        return [WriteTarget(w, d) for w, d in operands]
    if target_dir:
        dests, sources = target_dir, operands
    elif name in ("ln", "link") and len(operands) == 1:
        # `ln -s TARGET`: the link is made in the working folder, named as TARGET's last part.
        w, d = operands[0]
        return [WriteTarget(os.path.basename(w.rstrip("/")) or w, d)]
    elif len(operands) >= 2:
        dests, sources = [operands[-1]], operands[:-1]
    else:
        return out
    for dest, dest_dynamic in dests:
        out.append(WriteTarget(dest, dest_dynamic))
        for src, src_dynamic in sources:
            if dest_dynamic:
                continue
            base = os.path.basename(src.rstrip("/"))
            if src_dynamic or base in ("", ".", ".."):
                # `cp -r dir/. dest`: the contents of dir land in dest, names unknown here.
                out.append(WriteTarget(dest, False, into=recursive or src_dynamic))
            else:
                out.append(WriteTarget(os.path.join(dest, base)))
                if recursive:
                    out.append(WriteTarget(os.path.join(dest, base), into=True))
    return out


def _rsync(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    operands = _operands(words, _VALUE_OPTIONS["rsync"])
    if len(operands) < 2:
        return []
    dest, dynamic = operands[-1]
    if not dynamic and _is_remote(dest):
        return []
    out = [WriteTarget(dest, dynamic, into=True)]
    if _has(words, "--remove-source-files"):
        out += [WriteTarget(w, d) for w, d in operands[:-1] if not _is_remote(w)]
    for option in ("--log-file", "--write-batch", "--backup-dir", "--temp-dir", "--partial-dir"):
        out += _targets(_option_value(words, option))
    return out


def _scp(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    operands = _operands(words, _VALUE_OPTIONS["scp"])
    if len(operands) < 2:
        return []
    dest, dynamic = operands[-1]
    if not dynamic and _is_remote(dest):
        return []
    return [WriteTarget(dest, dynamic), WriteTarget(dest, dynamic, into=True)]


def _is_remote(word: str) -> bool:
    """``host:path`` / ``user@host:path`` (rsync, scp): not a file on this machine."""
    head = word.split("/", 1)[0]
    return ":" in head and not word.startswith(("./", "/"))


def _dd(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    return [WriteTarget(w[3:], d) for w, d in words[1:] if w.startswith("of=")]


def _sed(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """``sed -i`` writes its files; ``w FILE`` in a script writes FILE."""
    ws = [_Word(w, d, w) for w, d in words]
    scripts, _ = _sed_scripts(ws)
    out: list[WriteTarget] = []
    for script in scripts:
        if script.dynamic:
            out.append(WriteTarget(unknown="the sed script is only known at run time"))
            continue
        _, writes, parsed = sed_script_effects(script.value)
        if not parsed:
            out.append(WriteTarget(unknown="the sed script is not fully understood"))
        out += [WriteTarget(w) for w in writes if w not in ("/dev/stdout", "/dev/stderr")]
    in_place = any(
        (
            not d
            and (
                w.startswith("-i")
                or (w.startswith("-") and not w.startswith("--") and "i" in w[1:])
            )
        )
        or long_option_matches(w, "--in-place")
        for w, d in words[1:]
    )
    if in_place:
        script_words = {s.source for s in scripts}
        skip_value = False
        for w, d in words[1:]:
            if skip_value:
                skip_value = False
                continue
            if not d and w in ("-e", "--expression", "-f", "--file", "-l"):
                skip_value = True
                continue
            if not d and w.startswith("-"):
                continue
            if w in script_words:
                script_words.discard(w)
                continue
            out.append(WriteTarget(w, d))
    return out


_AWK_WRITE = re.compile(r"\bprintf?\b[^;{}\n]*?>|\bgetline\b[^;{}\n]*<")


def _awk(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """awk's ``print > "file"`` writes (and ``getline < "file"`` reads) a file named in
    its program: not checked here, so such a program always asks."""
    for w, d in words[1:]:
        if not d and not w.startswith("-") and _AWK_WRITE.search(w):
            return [WriteTarget(unknown="the awk program writes or reads files it names")]
    return []


def _sort(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    return _targets(_option_value(words, "--output", "o"))


def _tee_like_second(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """``uniq IN OUT``, ``xxd IN OUT``: the second operand."""
    operands = _operands(words, frozenset({"-f", "-s", "-w", "-c", "-g", "-l", "-o"}))
    return [WriteTarget(*operands[1])] if len(operands) > 1 else []


def _iconv(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    return _targets(_option_value(words, "--output", "o"))


def _tree(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    return _targets(_option_value(words, "", "o"))


def _split(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    operands = _operands(words, _VALUE_OPTIONS["split"])
    if len(operands) >= 2:
        prefix, dynamic = operands[1]
        return [
            WriteTarget(prefix + "aa", dynamic),
            WriteTarget(os.path.dirname(prefix) or ".", dynamic, into=True),
        ]
    return [WriteTarget("xaa"), WriteTarget(".", into=True)]


def _csplit(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    prefixes = _option_value(words, "--prefix", "f") or [("xx", False)]
    return [WriteTarget(p + "00", d) for p, d in prefixes] + [
        WriteTarget(os.path.dirname(p) or ".", d, into=True) for p, d in prefixes
    ]


def _file_magic(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    if _has(words, "--compile", "C"):
        return [WriteTarget(".", into=True)]  # NAME.mgc beside the working folder
    return []


def _url_name(url: str) -> str:
    path = urlsplit(url).path
    name = unquote(path.rsplit("/", 1)[-1]) if path else ""
    return name


def _curl(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    out = _targets(_option_value(words, "--output", "o"))
    for option in (
        "--dump-header",
        "--cookie-jar",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--etag-save",
        "--hsts",
        "--alt-svc",
        "--libcurl",
    ):
        short = {"--dump-header": "D", "--cookie-jar": "c"}.get(option, "")
        out += _targets(_option_value(words, option, short))
    if _has(words, "--config", "K"):
        out.append(WriteTarget(unknown="`curl -K` reads options (an output file too) from a file"))
    remote_name = _has(words, "--remote-name", "O") or _has(words, "--remote-name-all")
    if remote_name:
        if _has(words, "--remote-header-name", "J"):
            out.append(WriteTarget(unknown="`curl -J` takes the file name from the server"))
        urls = [w for w, d in words[1:] if "://" in w and not d]
        if not urls or any(d for w, d in words[1:] if not w.startswith("-")):
            out.append(
                WriteTarget(
                    unknown="`curl -O` writes a file named after a URL only known at run time"
                )
            )
        dirs = _option_value(words, "--output-dir")
        base = dirs[0][0] if dirs else ""
        for url in urls:
            name = _url_name(url)
            if not name:
                out.append(WriteTarget(unknown=f"`curl -O` cannot tell the file name of {url}"))
            else:
                out.append(WriteTarget(os.path.join(base, name) if base else name))
    return out


def _wget(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    out = _targets(_option_value(words, "--output-document", "O"))
    out += _targets(_option_value(words, "--output-file", "o"))
    out += _targets(_option_value(words, "--append-output", "a"))
    if _has(words, "--execute", "e") or _has(words, "--config"):
        out.append(WriteTarget(unknown="`wget -e` / `--config` can set where it writes"))
    prefix = _option_value(words, "--directory-prefix", "P")
    base = prefix[0][0] if prefix else "."
    if prefix and prefix[0][1]:
        out.append(WriteTarget(unknown="`wget -P` with a folder only known at run time"))
    if _option_value(words, "--output-document", "O"):
        return out
    recursive = (
        _has(words, "--recursive", "r")
        or _has(words, "--mirror", "m")
        or _has(words, "--force-directories", "x")
        or _has(words, "--page-requisites", "p")
    )
    if recursive:
        out.append(WriteTarget(base, into=True))
        return out
    if _has(words, "--content-disposition") or _has(words, "--trust-server-names"):
        out.append(WriteTarget(unknown="wget takes the file name from the server"))
    urls = [w for w, d in words[1:] if "://" in w and not d]
    if any(d for w, d in words[1:] if not w.startswith("-")) or _has(words, "--input-file", "i"):
        out.append(WriteTarget(unknown="wget writes files named after URLs only known at run time"))
    for url in urls:
        out.append(WriteTarget(os.path.join(base, _url_name(url) or "index.html")))
    return out


def _tar(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """``tar x`` fills the ``-C`` folder (or the working folder); ``tar c -f F`` writes F."""
    first = words[1][0] if len(words) > 1 and not words[1][1] else ""
    bundled = first if first and not first.startswith("-") else ""
    letters = bundled + "".join(
        w[1:] for w, d in words[1:] if not d and w.startswith("-") and not w.startswith("--")
    )
    extract = "x" in letters or _has(words, "--extract") or _has(words, "--get")
    create = any(c in letters for c in "cruA") or any(
        _has(words, o) for o in ("--create", "--append", "--update", "--catenate", "--concatenate")
    )
    out: list[WriteTarget] = []
    if extract:
        if _has(words, "--absolute-names", "P"):
            out.append(
                WriteTarget(unknown="`tar -P` extracts to the absolute paths in the archive")
            )
        dirs = _option_value(words, "--directory", "C")
        out += [WriteTarget(w, d, into=True) for w, d in dirs] or [WriteTarget(".", into=True)]
        out += _targets(_option_value(words, "--to-stdout", ""))
    if create:
        files = _option_value(words, "--file", "f")
        if bundled and "f" in bundled and not files:
            operands = [(w, d) for w, d in words[2:] if not w.startswith("-")]
            files = operands[:1]
        out += _targets(files)
    return out


def _unzip(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    if _has(words, "", "lptvzZ") and not _has(words, "", "d"):
        return []  # listing, testing, or to stdout
    dirs = [
        (words[i + 1][0], words[i + 1][1])
        for i, (w, d) in enumerate(words[:-1])
        if w == "-d" and not d
    ]
    return [WriteTarget(w, d, into=True) for w, d in dirs] or [WriteTarget(".", into=True)]


def _7z(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    if len(words) < 2 or words[1][0] not in ("x", "e"):
        if len(words) > 2 and words[1][0] in ("a", "u", "d", "rn"):
            return [WriteTarget(*words[2])]
        return []
    dirs = [(w[2:], d) for w, d in words[2:] if w.startswith("-o")]
    return [WriteTarget(w, d, into=True) for w, d in dirs] or [WriteTarget(".", into=True)]


def _cpio(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    if _has(words, "--extract", "i"):
        return [WriteTarget(".", into=True)]
    if _has(words, "--pass-through", "p"):
        operands = _operands(words, frozenset({"-F", "-H", "-O", "-I", "-E", "-M", "-R"}))
        return [WriteTarget(w, d, into=True) for w, d in operands[-1:]]
    return _targets(_option_value(words, "--file", "F") + _option_value(words, "", "O"))


def _patch(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    out = _targets(_option_value(words, "--output", "o"))
    dirs = _option_value(words, "--directory", "d")
    out += [WriteTarget(w, d, into=True) for w, d in dirs] or [WriteTarget(".", into=True)]
    return out


def _find(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    out: list[WriteTarget] = []
    starts: list[tuple[str, bool]] = []
    for i, (w, _d) in enumerate(words[1:], 1):
        if w in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(words):
            out.append(WriteTarget(*words[i + 1]))
    for w, d in words[1:]:
        if not d and w.startswith(("-", "(", "!")):
            break
        starts.append((w, d))
    if any(w == "-delete" for w, d in words[1:]):
        out += [WriteTarget(w, d, into=True) for w, d in starts] or [WriteTarget(".", into=True)]
    return out


def _git(cmd: SimpleCommand, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """``git clone URL DIR`` / ``git init DIR``: the new repository's folder."""
    argv = [w for w, _ in words]
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(argv):
        return []
    sub = argv[i]
    rest = words[i:]
    operands = _operands(
        [("git", False), *rest[1:]],
        frozenset(
            {
                "-b",
                "--branch",
                "-o",
                "--origin",
                "--depth",
                "-c",
                "--config",
                "--reference",
                "--template",
                "-u",
                "--upload-pack",
                "--separate-git-dir",
            }
        ),
    )
    if sub == "clone":
        if len(operands) >= 2:
            return [WriteTarget(*operands[1])]
        if operands:
            name = operands[0][0].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
            return [WriteTarget(name or ".", operands[0][1])]
    if sub == "init":
        return [WriteTarget(*operands[0])] if operands else [WriteTarget(".git")]
    return []


_SPECIAL = {
    "cp": _copy,
    "mv": _copy,
    "install": _copy,
    "ln": _copy,
    "link": _copy,
    "rsync": _rsync,
    "scp": _scp,
    "dd": _dd,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "sort": _sort,
    "uniq": _tee_like_second,
    "xxd": _tee_like_second,
    "iconv": _iconv,
    "tree": _tree,
    "split": _split,
    "csplit": _csplit,
    "file": _file_magic,
    "curl": _curl,
    "wget": _wget,
    "tar": _tar,
    "bsdtar": _tar,
    "gtar": _tar,
    "unzip": _unzip,
    "7z": _7z,
    "7za": _7z,
    "cpio": _cpio,
    "patch": _patch,
    "find": _find,
    "git": _git,
}


def _compressor(name: str, words: list[tuple[str, bool]]) -> list[WriteTarget]:
    """``gzip f`` replaces f by f.gz; ``gunzip f.gz`` writes f (``-c``: to stdout)."""
    if _has(words, "--stdout", "c") or _has(words, "--to-stdout") or _has(words, "--list", "l"):
        return []
    suffix = _COMPRESSORS[name]
    decompress = name.startswith("un") or name == "gunzip" or _has(words, "--decompress", "d")
    out: list[WriteTarget] = []
    for w, d in _operands(words, frozenset({"-S", "--suffix"})):
        out.append(WriteTarget(w, d))
        if decompress:
            for sfx in (suffix, ".tgz", ".gz", ".z"):
                if w.endswith(sfx):
                    out.append(WriteTarget(w[: -len(sfx)] + (".tar" if sfx == ".tgz" else ""), d))
                    break
        else:
            out.append(WriteTarget(w + suffix, d))
    return out


# Programs whose written files are all found by :func:`write_targets` (their other
# path arguments are only read). git is not one: `git checkout F` rewrites F.
KNOWN_WRITERS = (frozenset(_SPECIAL) - {"git"}) | _ALL_OPERANDS | frozenset(_COMPRESSORS)


def is_known_writer(cmd: SimpleCommand) -> bool:
    """Whether every file ``cmd`` writes is among :func:`write_targets`."""
    return bool(cmd.argv) and os.path.basename(cmd.argv[0]) in KNOWN_WRITERS
