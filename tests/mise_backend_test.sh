#!/usr/bin/env bash
# gfi mise --mc --backend cpu|cuda|auto. With a GPU (or gfi-emu, the CLI on
# the CUDA emulator): the GPU's Monte-Carlo MISE lies within 4 standard
# errors of the CPU backend's and of the exact MISE (its points are other
# draws, so not equal), auto picks it, the metadata says so; unsupported
# truths are usage errors naming --backend; GFI_CUDA_EMU_DEVICES=0 (emulator
# only) gives the no-device message. Without a GPU: cuda exits 1 (no device)
# or 2 (built without CUDA), auto is the CPU bit for bit.
# GFI_TEST_EXPECT=gpu|nodev|nocuda (optional) names the branch that must run.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

A1="--model mw:2 --phi pow:4 --R 3 --n 300"
A2="--model normal:cov=1,0.6,0.6,0.8 --dim 2 --phi pow:2 --R 1.5 --n 150"
rc=$(run "$GFI" mise $A1 --mc 40 --seed 7 --backend cpu); cp "$T/out" "$T/cpu1"
[ "$rc" = 0 ] && grep -q '^# backend: cpu' "$T/cpu1" && ok || bad "--backend cpu ($rc): $(cat "$T/err")"
rc=$(run "$GFI" mise $A1 --mc 40 --seed 7)
cmp -s <(data "$T/out") <(data "$T/cpu1") && ok || bad "default backend differs from cpu"
rc=$(run "$GFI" mise $A1 --mc 40 --seed 7 --backend auto); cp "$T/out" "$T/auto1"
[ "$rc" = 0 ] && ok || bad "--backend auto exited $rc: $(cat "$T/err")"
rc=$(run "$GFI" mise $A1 --mc 40 --seed 7 --backend cuda); cp "$T/out" "$T/cuda1"; cp "$T/err" "$T/cuda1.err"
if grep -q '^# backend: cuda' "$T/auto1"; then branch=gpu
elif grep -q 'built without CUDA' "$T/cuda1.err"; then branch=nocuda
else branch=nodev; fi
[ -z "$EXPECT" ] || [ "$EXPECT" = "$branch" ] && ok || bad "expected the $EXPECT branch, got $branch"

if [ "$branch" = gpu ]; then
  [ "$rc" = 0 ] && ok || bad "--backend cuda exited $rc with a GPU: $(cat "$T/cuda1.err")"
  cmp -s <(data "$T/auto1") <(data "$T/cuda1") && ok || bad "auto and cuda differ"
  grep -q '^# method: monte carlo on the GPU.*not the CPU backend.s points.*Plancherel' "$T/cuda1" && ok ||
    bad "cuda method line: $(grep '^# method' "$T/cuda1")"
  # the GPU's MISE against the CPU backend's and the exact one
  within4 "$(col "$T/cuda1" mise)" "$(col "$T/cuda1" se)" "$(col "$T/cpu1" mise)" "$(col "$T/cpu1" se)" && ok ||
    bad "D=1: cuda $(col "$T/cuda1" mise) +- $(col "$T/cuda1" se) vs cpu $(col "$T/cpu1" mise) +- $(col "$T/cpu1" se)"
  "$GFI" mise $A1 --exact >"$T/ex1"
  within4 "$(col "$T/cuda1" mise)" "$(col "$T/cuda1" se)" "$(col "$T/ex1" mise)" 0 && ok || bad "D=1 cuda vs exact"
  awk -v v="$(col "$T/cuda1" var)" -v b="$(col "$T/cuda1" bias2)" 'BEGIN { exit !(v > 0 && b > 0) }' && ok ||
    bad "cuda parts: bias2 $(col "$T/cuda1" bias2) var $(col "$T/cuda1" var)"
  "$GFI" mise $A2 --mc 30 --seed 5 --backend cpu >"$T/cpu2" || bad "D=2 cpu"
  "$GFI" mise $A2 --mc 30 --seed 5 --backend cuda >"$T/cuda2" || bad "D=2 cuda"
  "$GFI" mise $A2 --exact >"$T/ex2"
  within4 "$(col "$T/cuda2" mise)" "$(col "$T/cuda2" se)" "$(col "$T/cpu2" mise)" "$(col "$T/cpu2" se)" && ok ||
    bad "D=2: cuda $(col "$T/cuda2" mise) +- $(col "$T/cuda2" se) vs cpu $(col "$T/cpu2" mise) +- $(col "$T/cpu2" se)"
  within4 "$(col "$T/cuda2" mise)" "$(col "$T/cuda2" se)" "$(col "$T/ex2" mise)" 0 && ok || bad "D=2 cuda vs exact"
  # the same request twice: the same bits
  "$GFI" mise $A1 --mc 40 --seed 7 --backend cuda --threads 1 >"$T/again"
  cmp -s <(data "$T/again") <(data "$T/cuda1") && ok || bad "cuda not reproducible"
  # grid: the CPU's rule, no parts, and the output says so
  rc=$(run "$GFI" mise $A1 --mc 3 --seed 7 --ise grid --backend cuda)
  [ "$rc" = 0 ] && [ "$(col "$T/out" var)" = nan ] && grep -q 'bias2 and var not available' "$T/out" && ok ||
    bad "cuda --ise grid ($rc): $(grep '^# method' "$T/out") $(data "$T/out")"
  # a truth the GPU does not sample: usage error; auto runs it on the CPU
  rc=$(run "$GFI" mise --model laplace --R 2 --n 100 --mc 4 --seed 1 --backend cuda)
  [ "$rc" = 2 ] && grep -q -- "--backend: cuda: no GPU engine for --model 'laplace': the GPU Monte Carlo samples normal mixtures only" "$T/err" &&
    [ "$(wc -l <"$T/err")" = 1 ] && ok || bad "laplace --backend cuda: $rc $(cat "$T/err")"
  rc=$(run "$GFI" mise --model laplace --R 2 --n 100 --mc 4 --seed 1 --backend auto)
  [ "$rc" = 0 ] && grep -q '^# backend: cpu' "$T/out" && ok || bad "laplace auto falls back to cpu ($rc)"
  # the emulator without its device: the no-device branch
  if grep -q '^# backend: cuda (device 0: gfi CUDA emulator' "$T/cuda1"; then
    rc=$(GFI_CUDA_EMU_DEVICES=0 run "$GFI" mise $A1 --mc 4 --seed 7 --backend cuda)
    [ "$rc" = 1 ] && grep -q -- '--backend cuda: no usable GPU device' "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] && ok ||
      bad "emulator without device, cuda: $rc $(cat "$T/err")"
    rc=$(GFI_CUDA_EMU_DEVICES=0 run "$GFI" mise $A1 --mc 40 --seed 7 --backend auto)
    [ "$rc" = 0 ] && cmp -s <(data "$T/out") <(data "$T/cpu1") && grep -q '^# backend: cpu' "$T/out" && ok ||
      bad "emulator without device, auto is not the cpu run"
  fi
else
  cmp -s <(data "$T/cpu1") <(data "$T/auto1") && grep -q '^# backend: cpu' "$T/auto1" && ok ||
    bad "auto without a GPU differs from cpu"
  if [ "$branch" = nocuda ]; then
    [ "$rc" = 2 ] && ok || bad "--backend cuda without libgfi_cuda exited $rc"
  else
    [ "$rc" = 1 ] && grep -q 'no usable GPU device' "$T/cuda1.err" && [ "$(wc -l <"$T/cuda1.err")" = 1 ] && ok ||
      bad "--backend cuda without a GPU: rc $rc, $(cat "$T/cuda1.err")"
  fi
fi
# usage errors, any build
rc=$(run "$GFI" mise $A1 --mc 4 --seed 1 --backend gpu)
[ "$rc" = 2 ] && grep -q -- "--backend: unknown backend 'gpu'" "$T/err" && ok || bad "--backend gpu: $rc $(cat "$T/err")"
rc=$(run "$GFI" mise $A1 --exact --backend cuda)
[ "$rc" = 2 ] && grep -q -- "--backend" "$T/err" && ok || bad "--exact --backend cuda: $rc $(cat "$T/err")"
rc=$(run "$GFI" mise $A1 --exact --backend auto)
[ "$rc" = 0 ] && ok || bad "--exact --backend auto: $rc"
"$GFI" mise --help | grep -q -- '--backend' && ok || bad "mise --help lacks --backend"

finish "mise-backend"
