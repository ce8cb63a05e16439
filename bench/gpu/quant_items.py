#!/usr/bin/env python3
"""Per item of a seed report (report --format json): for each recipe given, each op and
pass, the autocast and prequant medians, their difference, the quantization timed alone
(quant_ms) and its floor share (quant_bytes / copy), and the GEMM library the item kept.

usage: quant_items.py REPORT.json [RECIPE ...]
"""
import json
import sys


def library(result):
    notes = result.get("notes") or []
    for n in notes:
        if n.startswith("GEMM library chosen by measurement: "):
            return n.split(": ", 1)[1].split(" (", 1)[0]
        if n.startswith("cuBLASLt only"):
            return "cuBLASLt only"
    return (result.get("algorithm") or "-")[:24]


def main():
    doc = json.load(open(sys.argv[1]))
    want = set(sys.argv[2:])
    rows = {}
    for it in doc["items"]:
        r = it.get("result")
        if not r or (want and it["recipe"] not in want):
            continue
        key = (it["recipe"], it["op"], it["pass"])
        rows.setdefault(key, {})[it["mode"]] = (r, it)
    print(f"{'recipe':12} {'op':9} {'pass':6} {'auto ms':>9} {'pre ms':>9} {'diff':>8} "
          f"{'quant ms':>9} {'floor ms':>9} {'lib auto':>24} {'lib pre':>24}")
    for (recipe, op, ps), modes in sorted(rows.items()):
        a = modes.get("autocast")
        p = modes.get("prequant")
        if not a or not p:
            continue
        ra, ia = a
        rp, ip = p
        floor = ra.get("quant_bytes", 0) / ra["copy_bytes_per_s"] * 1e3 \
            if ra.get("copy_bytes_per_s") else 0
        print(f"{recipe:12} {op:9} {ps:6} {ra['median_ms']:9.4f} {rp['median_ms']:9.4f} "
              f"{ra['median_ms'] - rp['median_ms']:8.4f} {ra.get('quant_ms') or 0:9.4f} "
              f"{floor:9.4f} {library(ra):>24} {library(rp):>24}")


if __name__ == "__main__":
    main()
