#!/usr/bin/env python3
"""Checks README.md and docs/ against the source tree; no build needed.

Fails (exit 1, one line per finding) when
  - README.md or a page under docs/ names a file that does not exist: a
    markdown link (relative to the page), or a path-like word (`dir/file.ext`
    relative to the repository root or an include directory, or a bare
    `File.cpp` that no file in the tree is named);
  - it names an `attn-*` pass, pipeline or tool that nothing defines (the
    passes of every Passes.td, the pipelines of passes/lib/Pipelines.cpp,
    attn-opt's own flags, the CMake executables and test targets);
  - it gives a pass or pipeline an option it does not have
    (`attn-to-block{block-m=64}`, `--attn-to-gpu="chip=sm_90a"`), or an
    attn-run / attn-launch-bench flag that the tool does not define;
  - it names an environment variable (`ATTN_*`, `CUDA_HOME`, ...) that no
    source file, script or CMake file reads or defines;
  - a comment in a source file names an `attn-*` pass, pipeline or tool
    that nothing defines, or a source file or script names a repository
    path (docs/..., passes/..., ...) that does not exist;
  and in the reverse direction when
  - an environment variable the code reads (a string literal "ATTN_*" in
    C++, C or Python, `${ATTN_*}` in a shell script) or a CMake option() is
    named nowhere in README.md or docs/;
  - an option of a pipeline or a flag of attn-run / attn-launch-bench is
    named nowhere in README.md or docs/ (pass options are documented by the
    generated pass reference, which the next check keeps current);
  - docs/reference/generated/ differs from what scripts/gen-docs.py writes,
    or the tables bench/make_results.py writes are stale.

bench/RESULTS.md and bench/history/ are logs of past runs (they may name
files and options that were removed since) and are not checked.
Usage: python3 test/docs/check_docs.py [--root DIR]
"""

import argparse
import os
import re
import subprocess
import sys

TEXT_EXTS = (".cpp", ".h", ".c", ".td", ".py", ".sh", ".txt", ".cmake", ".in",
             ".mlir", ".md", ".map")
INCLUDE_DIRS = ["dialect/include", "passes/include", "codegen/include",
                "runtime/include", "reference", "."]
# Words that look like paths but name things outside the tree or
# placeholders: build outputs, installed prefixes, peers' repositories.
OUTSIDE = re.compile(
    r"^(build[^/]*/|\.device|\.peers|\.ci/|/|~|\$|P/|DIR/|<|\.\./shared/|"
    r"lib/python/|lib/cmake/|include/attn/\{|bin/\{|fla/|mlir/|llvm/|"
    r"include/triton|lib/Conversion|torch|spec/)")
ENV_NAMES = re.compile(r"\b(ATTN_[A-Z0-9_]*[A-Z0-9]|CUDA_HOME|OMP_NUM_THREADS|"
                       r"XDG_CACHE_HOME|MLIR_TBLGEN)\b")


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def git_files(root):
    """The files git tracks or would track under `root`, or None outside a
    work tree (a source tarball)."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others",
             "--exclude-standard", "-z"],
            capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [os.path.normpath(p) for p in out.decode().split("\0")
            if p and os.path.exists(os.path.join(root, p))]


class Tree:
    def __init__(self, root):
        self.root = root
        self.files = set()
        self.basenames = set()
        self.dirs = set()
        listed = git_files(root)
        if listed is not None:
            # What git tracks or would (its ignores, .git/info/exclude
            # included, hold build trees and local scratch).
            for p in listed:
                self.files.add(p)
                self.basenames.add(os.path.basename(p))
                d = os.path.dirname(p)
                while d and d not in self.dirs:
                    self.dirs.add(d)
                    d = os.path.dirname(d)
        else:
            skip = {".git", "build", "build-sanitize", ".device", ".peers",
                    "__pycache__"}
            for d, ds, fs in os.walk(root):
                ds[:] = [x for x in ds
                         if x not in skip and not x.startswith("build")]
                rel = os.path.relpath(d, root)
                if rel != ".":
                    self.dirs.add(rel)
                for f in fs:
                    p = os.path.normpath(os.path.join(rel, f))
                    self.files.add(p)
                    self.basenames.add(f)
        self.sources = [f for f in self.files if f.endswith(TEXT_EXTS)
                        and not f.startswith(("docs/", "bench/history/"))
                        and f not in ("README.md", "bench/RESULTS.md")]

    def text(self, rel):
        return read(os.path.join(self.root, rel))

    def exists(self, rel):
        rel = os.path.normpath(rel)
        return rel in self.files or rel in self.dirs

    def path_exists(self, word):
        w = word.rstrip("/")
        if any(self.exists(os.path.join(i, w)) for i in INCLUDE_DIRS):
            return True
        # A path given from inside its top directory (gpu/LayoutUtils.h
        # for codegen/gpu/LayoutUtils.h) or a tail of a longer one.
        return any(f.endswith("/" + w) for f in self.files | self.dirs)


def doc_files(tree):
    docs = ["README.md"] + sorted(f for f in tree.files
                                  if f.startswith("docs/") and f.endswith(".md"))
    return docs


def strip_fences(text):
    """The text with each line's code-fence state: (line, in_code)."""
    out, code = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            code = not code
            out.append((line, True))
            continue
        out.append((line, code))
    return out


def defined_names(tree):
    """Passes with their options, pipelines with theirs, tools' flags."""
    passes, pipelines, targets = {}, {}, set()
    for f in tree.files:
        if f.endswith("Passes.td"):
            t = tree.text(f)
            for m in re.finditer(r'def \w+ : Pass<"([a-z0-9-]+)"(.*?)\n}', t, re.S):
                passes[m.group(1)] = set(re.findall(
                    r'(?:List)?Option<\s*"\w+",\s*"([a-z0-9-]+)"', m.group(2)))
    pl = tree.text("passes/lib/Pipelines.cpp")
    gpu_opts = set(re.findall(r'\*this,\s*"([a-z0-9-]+)"', pl))
    for name in re.findall(r'"(attn-[a-z0-9-]+)",\s*\n?\s*"', pl):
        if name not in passes:
            pipelines[name] = gpu_opts if name == "attn-to-gpu" else set()
    for f in tree.files:
        if f.endswith(("CMakeLists.txt", ".cmake")):
            t = tree.text(f)
            targets.update(re.findall(
                r"(?:add_executable|add_library|add_custom_target|add_mlir_\w+|"
                r"add_lit_testsuite|add_attn_\w+|attn_add_\w+)\(\s*([A-Za-z0-9_-]+)", t))
            targets.update(re.findall(r"add_test\(\s*NAME\s+([A-Za-z0-9_-]+)", t))
    tools = {}
    for tool in ("attn-run", "attn-launch-bench", "attn-opt"):
        src = tree.text("tools/%s/%s.cpp" % (tool, tool))
        tools[tool] = set(re.findall(
            r'cl::(?:opt|list)<[^>]*>\s*\w*\s*[({]?\s*\n?\s*"([a-z0-9-]+)"', src))
    return passes, pipelines, targets, tools


def env_names(tree):
    """(names the code reads: env vars and CMake options, names it defines)."""
    read_, known = set(), set()
    for f in tree.sources:
        t = tree.text(f)
        known.update(ENV_NAMES.findall(t))
        if f.endswith((".cpp", ".h", ".c", ".py")):
            read_.update(re.findall(r'"(ATTN_[A-Z0-9_]+|CUDA_HOME|OMP_NUM_THREADS)"', t))
        if f.endswith(".sh"):
            read_.update(re.findall(r"\$\{?(ATTN_[A-Z0-9_]+)", t))
        if f.endswith(("CMakeLists.txt", ".cmake")):
            read_.update(re.findall(r"\boption\(\s*(ATTN_[A-Z0-9_]+)", t))
            read_.update(re.findall(r"set\(\s*(ATTN_[A-Z0-9_]+)\s+[^)]*CACHE", t))
    return read_, known


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    args = p.parse_args()
    tree = Tree(args.root)
    passes, pipelines, targets, tools = defined_names(tree)
    env_read, env_known = env_names(tree)
    errors = []
    docs = doc_files(tree)
    all_doc_text = ""

    for doc in docs:
        text = tree.text(doc)
        all_doc_text += text + "\n"
        ddir = os.path.dirname(doc)
        section = ""
        lines = strip_fences(text)
        paras, start = {}, 0
        for i, (line, _) in enumerate(lines + [("", False)]):
            if not line.strip():
                para = "\n".join(l for l, _ in lines[start:i])
                for j in range(start, i):
                    paras[j] = para
                start = i + 1
        for n, (line, code) in enumerate(lines, 1):
            where = "%s:%d" % (doc, n)
            # A paragraph that says what was removed, and the commit that
            # last had it, may name it.
            para = paras.get(n - 1, "")
            history = bool(re.search(r"\bremoved\b", para) and
                           re.search(r"\b[0-9a-f]{7,40}\b", para))
            if line.startswith("#"):
                section = line
            # Markdown links, relative to the page.
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                t = target.split("#")[0]
                if t and not tree.exists(os.path.join(ddir, t)):
                    errors.append("%s: link to %s: no such file" % (where, target))
            # Path-like words.
            for w in re.findall(r"(?<![\w./$<{-])((?:\.?[\w.-]+/)+[\w.-]*[\w])(?![\w*])", line):
                if OUTSIDE.match(w) or "*" in w or re.search(r"\bX\b|\bFILE\b|\bDIR\b|\bPATH\b|\bLOG\b|OUT\.png", w):
                    continue
                if re.match(r"^\d", w) or "//" in w or w.count("/") == 0:
                    continue
                # Words that are not paths: ratios (a/b), units, dtypes.
                if not re.search(r"\.(cpp|h|c|td|py|sh|md|mlir|txt|cmake|map|png|tsv|in)$", w) \
                        and not tree.path_exists(w) and not w.endswith("/"):
                    top = w.split("/")[0]
                    if top not in {d.split("/")[0] for d in tree.dirs}:
                        continue
                if re.search(r"\.\w+/\.", w):  # Oracle.h/.cpp
                    continue
                if not tree.path_exists(w) and not tree.exists(os.path.join(ddir, w)) \
                        and not history:
                    errors.append("%s: %s: no such file or directory" % (where, w))
            # Bare file names with a source extension.
            for w in re.findall(r"(?<![\w/.*-])([A-Z][\w-]*\.(?:cpp|h|td))\b", line):
                if w not in tree.basenames and not history:
                    errors.append("%s: %s: no file of that name" % (where, w))
            # attn-* names: passes, pipelines, tools, targets.
            for m in re.finditer(r"(?<![\w/.$-])(-?-?)(attn-[a-z0-9-]*[a-z0-9])"
                                 r"(?![\w*-])"
                                 r"(?:\{([^}]*)\}|\[?=\"([^\"]*)\"|=\"([^\"]*)\")?", line):
                name = m.group(2)
                opts = m.group(3) or m.group(4) or m.group(5)
                known = (name in passes or name in pipelines or name in targets
                         or name in tools or name in tools["attn-opt"])
                if not known:
                    if not history:
                        errors.append("%s: %s: no pass, pipeline, tool or target of "
                                      "that name" % (where, name))
                    continue
                valid = passes.get(name, pipelines.get(name))
                if opts and valid is not None:
                    for o in re.findall(r"(?:^|\s)([a-z][a-z0-9-]*)=", opts):
                        if o not in valid:
                            errors.append("%s: %s has no option %s" % (where, name, o))
            # Environment variables.
            for v in ENV_NAMES.findall(line):
                if v not in env_known:
                    errors.append("%s: %s: nothing reads or defines it" % (where, v))
            # Tool flags, in a tool's own section of tools.md.
            for tool in ("attn-run", "attn-launch-bench"):
                if doc.endswith("reference/tools.md") and section.strip("# ") == tool:
                    for flag in re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", line):
                        if flag not in tools[tool]:
                            errors.append("%s: %s has no flag --%s" % (where, tool, flag))

    # Code comments and scripts: the passes, tools and repository paths
    # they name exist too (a renamed pass or a moved doc leaves no stale
    # pointer behind).
    top_dirs = "docs|bench|scripts|examples|test|tools|runtime|passes|codegen|dialect|reference|python"
    for f in sorted(tree.sources):
        if not f.endswith((".cpp", ".h", ".td", ".c", ".py", ".sh", ".txt", ".cmake")):
            continue
        for n, line in enumerate(tree.text(f).split("\n"), 1):
            if re.search(r"\bremoved\b", line) and re.search(r"\b[0-9a-f]{7,40}\b", line):
                continue
            where = "%s:%d" % (f, n)
            if line.strip().startswith(("//", "#")):
                for m in re.finditer(r"(?<![\w/.$<-])(attn-[a-z0-9-]*[a-z0-9])(?![\w*-]|\.\w)", line):
                    name = m.group(1)
                    if not (name in passes or name in pipelines or name in targets
                            or name in tools or name in tools["attn-opt"]):
                        errors.append("%s: %s: no pass, pipeline, tool or target of that name"
                                      % (where, name))
            for w in re.findall(r"(?<![\w./$<{-])((?:%s)/[\w./-]*\w)(?![\w*])" % top_dirs, line):
                if not tree.path_exists(w):
                    errors.append("%s: %s: no such file or directory" % (where, w))

    # The reverse direction: what the code defines is documented.
    for v in sorted(env_read):
        if not re.search(r"\b%s\b" % re.escape(v), all_doc_text):
            errors.append("environment variable or CMake option %s is read by the code "
                          "but named nowhere in README.md or docs/" % v)
    for name, opts in sorted(pipelines.items()):
        if not re.search(r"\b%s\b" % re.escape(name), all_doc_text):
            errors.append("pipeline %s is documented nowhere" % name)
        for o in sorted(opts):
            if not re.search(r"`%s`|\b%s=" % (re.escape(o), re.escape(o)), all_doc_text):
                errors.append("option %s of %s is documented nowhere" % (o, name))
    for name in sorted(passes):
        if not re.search(r"\b%s\b" % re.escape(name), all_doc_text):
            errors.append("pass %s is documented nowhere" % name)
    for tool in ("attn-run", "attn-launch-bench"):
        for flag in sorted(tools[tool]):
            if not re.search(r"--%s(?![\w-])" % re.escape(flag), all_doc_text):
                errors.append("flag --%s of %s is documented nowhere" % (flag, tool))

    # Generated pages and tables.
    for cmd in (["scripts/gen-docs.py", "--check"], ["bench/make_results.py", "--check"]):
        r = subprocess.run([sys.executable] + cmd, cwd=args.root,
                           capture_output=True, text=True)
        if r.returncode != 0:
            errors.append("%s: %s" % (" ".join(cmd), (r.stderr or r.stdout).strip()))

    for e in errors:
        print("check_docs: " + e)
    print("check_docs: %d finding(s) in %d pages" % (len(errors), len(docs)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
