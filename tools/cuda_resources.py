#!/usr/bin/env python3
"""Registers, spills and shared memory of every libgfi_cuda kernel, from ptxas
(nvcc -Xptxas -v, sm_90), with the occupancy they allow on a Hopper SM for the
block sizes gfi launches them with. Needs nvcc only, no GPU.

    python3 tools/cuda_resources.py [--check] [BUILD_DIR]      (default: build)

--check: exit 1 when a kernel could not launch on an sm_90 GPU at gfi's block
size: its registers times the block's threads over the 65,536 of an SM, or its
static shared memory over 48 KiB (the test 'cuda-resources').

Reads BUILD_DIR/compile_commands.json for the flags meson uses, recompiles
each cuda/*.cu once for sm_90 with -Xptxas -v into a temporary folder, and
prints one row per kernel. Occupancy: 65536 registers per SM allocated per warp
in units of 256, at most 64 warps and 32 blocks per SM (sm_90).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# threads per block as launched (cuda/*.cu)
BLOCK = {
    "ps_kernel": 128, "ps_prep_kernel": 256, "ps_combine_kernel": 256, "ps_fill_ones": 256,
    "at_forward": 128, "at_backward_q": 128, "at_backward_k": 128, "at_tables": 256,
    "at_finite": 256, "at_rowterms": 128, "flt_sum_kernel": 128, "flt_factors_kernel": 256,
    "mc_sample_kernel": 128, "mc_ise_kernel": 256,
    "absmax_kernel": 256, "sum_kernel": 256, "ecf1_kernel": 256, "ecf2_kernel": 256,
    "ecf_combine_kernel": 256,
}


def occupancy(regs, threads):
    warps = (threads + 31) // 32
    per_warp = ((max(regs, 1) * 32 + 255) // 256) * 256
    blocks = min(32, 65536 // (per_warp * warps), 64 // warps)
    return blocks * warps


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    build = args[0] if args else "build"
    cc = json.load(open(os.path.join(build, "compile_commands.json")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for e in cc:
            if not e["file"].endswith(".cu"):
                continue
            args = shlex.split(e["command"])
            out = []
            skip = False
            for i, a in enumerate(args):
                if skip:
                    skip = False
                    continue
                if a == "-o":
                    skip = True
                    continue
                if a == "-gencode":  # one target: sm_90 SASS
                    skip = True
                    continue
                out.append(a)
            out += ["-gencode", "arch=compute_90,code=sm_90", "-Xptxas", "-v", "-o",
                    os.path.join(tmp, "k.o")]
            r = subprocess.run(out, cwd=e["directory"], capture_output=True, text=True)
            if r.returncode:
                sys.stderr.write(r.stderr)
                sys.exit(f"cuda_resources: nvcc failed on {e['file']}")
            demangled = subprocess.run(["c++filt"], input=r.stderr, capture_output=True,
                                       text=True).stdout
            cur = None
            props = {}
            for line in demangled.splitlines():
                m = re.search(r"Compiling entry function '(.*)' for", line)
                if m:
                    cur = re.sub(r"\(.*", "", m.group(1)).replace("void ", "")
                    props = {}
                    continue
                m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                              line)
                if m and cur:
                    props["stack"], props["ss"], props["sl"] = map(int, m.groups())
                m = re.search(r"Used (\d+) registers", line)
                if m and cur:
                    sm = re.search(r"(\d+) bytes smem", line)
                    rows.append((os.path.basename(e["file"]), cur, int(m.group(1)), props.get("stack", 0),
                                 props.get("ss", 0), props.get("sl", 0), int(sm.group(1)) if sm else 0))
                    cur = None
    print(f"{'file':14s} {'kernel':34s} {'regs':>4s} {'stack':>5s} {'spill st/ld':>11s} "
          f"{'smem':>6s} {'block':>5s} {'warps/SM':>8s}")
    bad = []
    for f, k, regs, stack, ss, sl, smem in rows:
        base = re.sub(r"<.*", "", k)
        blk = BLOCK.get(base)
        if blk is None:
            bad.append(f"{k}: block size unknown to this script (add it to BLOCK)")
        elif occupancy(regs, blk) == 0:
            bad.append(f"{k}: {regs} registers x {blk} threads exceed an SM's 65536: the launch would fail")
        if smem > 48 * 1024:
            bad.append(f"{k}: {smem} bytes of static shared memory (48 KiB at most)")
        occ = f"{occupancy(regs, blk):8d}" if blk else f"{'':8s}"
        print(f"{f:14s} {k:34s} {regs:4d} {stack:5d} {ss:5d}/{sl:<5d} {smem:6d} "
              f"{blk if blk else '':>5} {occ}")
    if not rows:
        bad.append("no kernels found (no .cu files in compile_commands.json?)")
    for b in bad:
        print("PROBLEM: " + b)
    print(f"cuda-resources: {len(rows)} kernels, {len(bad)} problems")
    if check and bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
