#!/usr/bin/env python3
"""bench/gpu/w4a16_ceiling.py: what a speed-up target asks, and its arguments' errors.

usage: w4a16_ceiling_test.py BENCH_GPU_DIR
"""
import os
import subprocess
import sys
import unittest

BENCH = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "bench", "gpu")
sys.path.insert(0, BENCH)
import w4a16_ceiling as ceiling  # noqa: E402  (PyTorch is imported only by its main)

LAYER = [(name, k, n) for name, k, n in ceiling.SHAPES]


def gemms(m):
    return [(m, k, n) for _, k, n in LAYER]


class WhatItNeedsTest(unittest.TestCase):
    def test_layer_work_counts_int4_weights_and_bf16_scales(self):
        flops, w4 = ceiling.layer_work([(16, 4096, 6144)])
        self.assertEqual(flops, 2.0 * 16 * 4096 * 6144)
        # 4 bits a weight, one 2-byte scale per 128 K of each row.
        self.assertEqual(w4, 4096 * 6144 / 2 + 32 * 6144 * 2)

    def test_the_layer_at_128_tokens_needs_more_than_the_h200_reaches(self):
        # Figures of one H200 run (docs/benchmarks.md): PyTorch's BF16 layer at M = 128 took
        # 0.14382 ms with a clean L2, its 8192^3 GEMM ran at 731 TFLOP/s, copies at 4.26 TB/s.
        need = ceiling.what_it_needs(gemms(128), 0.14382, 2.0, 731, 4.26)
        self.assertAlmostEqual(need["target_ms"], 0.07191)
        self.assertAlmostEqual(need["need_tflops"], 776.45, places=1)
        self.assertAlmostEqual(need["need_tbps"], 1.564, places=3)
        self.assertEqual(need["verdict"], "beyond the device's BF16 rate")

    def test_the_layer_at_16_tokens_is_within_the_ceilings(self):
        need = ceiling.what_it_needs(gemms(16), 0.12896, 2.0, 731, 4.26)
        self.assertAlmostEqual(need["need_tflops"], 108.24, places=1)
        self.assertAlmostEqual(need["need_tbps"], 1.744, places=3)
        self.assertEqual(need["verdict"], "within the ceilings")

    def test_both_ceilings_can_be_named(self):
        need = ceiling.what_it_needs(gemms(128), 0.01, 1.0, 731, 4.26)
        self.assertEqual(need["verdict"], "beyond the device's BF16 rate and copy bandwidth")

    def test_a_need_equal_to_a_ceiling_is_within_it(self):
        flops, _ = ceiling.layer_work(gemms(128))
        rate = flops / 0.05 / 1e9
        need = ceiling.what_it_needs(gemms(128), 0.1, 2.0, rate, 100.0)
        self.assertEqual(need["verdict"], "within the ceilings")


class ArgumentsTest(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, os.path.join(BENCH, "w4a16_ceiling.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_help_teaches_and_exits_0(self):
        r = self.run_script("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("--ms", "--speedup", "--rounds", "--big", "need_tflops", "clean L2"):
            self.assertIn(text, r.stdout)

    def test_bad_values_are_exit_2_naming_the_argument_and_value(self):
        cases = [
            (["--ms", "0"], "--ms", "M = 0 is outside 1..65536"),
            (["--ms", "16,x"], "--ms", "'16,x' is not a comma-separated list of integers"),
            (["--ms", "70000"], "--ms", "M = 70000 is outside"),
            (["--ms", "16,128,16"], "--ms", "M = 16 is given twice"),
            (["--speedup", "0.5"], "--speedup", "0.5 is outside 1.0..100.0"),
            (["--speedup", "nan"], "--speedup", "nan is outside"),
            (["--speedup", "two"], "--speedup", "'two' is not a number"),
            (["--rounds", "0"], "--rounds", "0 is outside 1..1000"),
            (["--big", "100"], "--big", "100 is outside 1024..16384"),
            (["--bogus"], "unrecognized arguments", "--bogus"),
        ]
        for args, name, text in cases:
            with self.subTest(args=args):
                r = self.run_script(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(name, r.stderr)
                self.assertIn(text, r.stderr)


if __name__ == "__main__":
    unittest.main()
