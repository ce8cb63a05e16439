"""Tables of context_check.sh: decode GEMMs alone vs mixed vs PyTorch, with each batch's
power and clock; the seed job's energy twice, the counter against NVML's sampled power,
and the wall time with and without --energy.

usage: python3 bench/gpu/context_compare.py OUT_DIR
Exit status 1 when a bar is missed: alone vs mixed beyond 2%, gemmprof vs PyTorch beyond
3%, the two energy runs' per-layer joules beyond 2%, or counter vs sampled power beyond 5%."""
import csv
import json
import os
import statistics
import sys


def load(out, tag):
    path = os.path.join(out, f"{tag}.json")
    return json.load(open(path)) if os.path.exists(path) else None


def decode_items(doc):
    """(MxKxN, recipe) -> (b2b ms, batch number) for the decode GEMMs (M <= 128)."""
    out = {}
    for it in doc["items"]:
        r = it.get("result")
        if not r or it["m"] > 128 or not r.get("b2b") or not r["b2b"].get("center_ms"):
            continue
        out[(f'{it["m"]}x{it["k"]}x{it["n"]}', it["recipe"])] = (
            r["b2b"]["center_ms"], r.get("batch_id") or r.get("group_uid"))
    return out


def batch_state(doc, uid):
    for b in doc.get("batches", []):
        if b["batch_id"] == uid:
            return f'{b["power_w"] or 0:.0f} W {b["sm_clock_mhz_mean"] or 0:.0f} MHz'
    # A build before contexts has no batches: the item's own telemetry.
    for it in doc["items"]:
        r = it.get("result")
        if r and r.get("group_uid") == uid:
            t = r["telemetry"]
            mhz = t.get("sm_clock_mhz_mean") or (t["sm_clock_mhz_min"] + t["sm_clock_mhz_max"]) / 2
            return f'{t["power_w_avg"]:.0f} W {mhz:.0f} MHz'
    return "-"


def torch_rows(out):
    path = os.path.join(out, "torch_decode.csv")
    if not os.path.exists(path):
        return {}
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["backend"] == "cublas" and r["recipe"] == "bf16":
            continue  # the cuBLASLt row is the like-for-like one
        rows[(f'{r["m"]}x{r["k"]}x{r["n"]}', r["recipe"])] = float(r["b2b_ms"])
    return rows


def contexts(out):
    runs = {t: load(out, t) for t in ("alone1", "alone2", "mixed1", "mixed2", "before_mixed")}
    if not runs["alone1"] or not runs["mixed1"]:
        return False
    items = {t: decode_items(d) for t, d in runs.items() if d}
    torch = torch_rows(out)
    failed = False
    print("decode GEMMs, prequant, back-to-back us per GEMM (batch power and mean SM clock)")
    print(f'{"GEMM":16s} {"recipe":12s} {"alone":>8s} {"mixed":>8s} {"mixed/alone":>11s} '
          f'{"PyTorch":>8s} {"alone/PyTorch":>13s} {"before:mixed":>12s}   alone1 state / mixed1 state')
    for key in sorted(items["alone1"]):
        alone = statistics.mean(items[t][key][0] for t in ("alone1", "alone2") if t in items)
        mixed = statistics.mean(items[t][key][0] for t in ("mixed1", "mixed2") if t in items)
        ratio = mixed / alone
        pt = torch.get(key)
        vs = alone / pt if pt else None
        before = items.get("before_mixed", {}).get(key)
        failed |= abs(ratio - 1) > 0.02 or (vs is not None and abs(vs - 1) > 0.03)
        print(f"{key[0]:16s} {key[1]:12s} {alone * 1e3:8.2f} {mixed * 1e3:8.2f} {ratio:11.4f} "
              + (f"{pt * 1e3:8.2f} {vs:13.4f} " if pt else f'{"-":>8s} {"-":>13s} ')
              + (f"{before[0] * 1e3:12.2f}" if before else f'{"-":>12s}')
              + f"   {batch_state(runs['alone1'], items['alone1'][key][1])} / "
              f"{batch_state(runs['mixed1'], items['mixed1'][key][1])}"
              + (f" / before {batch_state(runs['before_mixed'], before[1])}" if before else ""))
    for t in ("alone1", "mixed1"):
        print(f"{t} batches:")
        for b in runs[t].get("batches", []):
            print(f'  {b["batch"]}: {b["context"]} ({b["gemms"]}) {b["power_w"] or 0:.0f} W, '
                  f'SM {b["sm_clock_mhz_min"] or 0:.0f}-{b["sm_clock_mhz_max"] or 0:.0f} MHz '
                  f'(mean {b["sm_clock_mhz_mean"] or 0:.0f})')
    return failed


def energy(out):
    e1, e2, plain = (load(out, t) for t in ("seed_energy1", "seed_energy2", "seed_plain"))
    if not e1 or not e2:
        return False
    failed = False
    rows2 = {(r["mode"], r["recipe"]): r for r in e2["energy"]}
    print("\nseed 5B with --energy, per layer: joules (run 1, run 2, 2/1), energy and time "
          "ratio vs bf16 (run 1, 95% intervals)")
    for r in e1["energy"]:
        o = rows2.get((r["mode"], r["recipe"]))
        if r["per_layer_joules"] is None or not o or o["per_layer_joules"] is None:
            print(f'  {r["mode"]:9s} {r["recipe"]:12s} not complete')
            failed = True
            continue
        ratio = o["per_layer_joules"] / r["per_layer_joules"]
        failed |= abs(ratio - 1) > 0.02

        def ci(c, i):
            return "-" if c is None else (f"{c:.3f}x" + (f' [{i["low"]:.3f}, {i["high"]:.3f}]'
                                                         if i else ""))
        print(f'  {r["mode"]:9s} {r["recipe"]:12s} {r["per_layer_joules"]:8.4f} J '
              f'{o["per_layer_joules"]:8.4f} J {ratio:7.4f}   energy '
              f'{ci(r["energy_ratio_vs_bf16"], r["energy_ratio_vs_bf16_ci"])}   time '
              f'{ci(r["time_ratio_vs_bf16"], r["time_ratio_vs_bf16_ci"])}')
    dev = []
    windows, updates, idle = [], [], set()
    for doc in (e1, e2):
        for it in doc["items"]:
            e = (it.get("result") or {}).get("energy")
            if not e or not e.get("joules"):
                continue
            if e["sampled_power_w"] > 0:
                dev.append(e["power_w"] / e["sampled_power_w"] - 1)
            windows.append(e["window_s"])
            updates.append(e["counter_updates"])
            idle.add(round(e["idle_power_w"]))
    if dev:
        worst = max(dev, key=abs)
        failed |= abs(worst) > 0.05
        print(f"counter vs sampled NVML power over the same windows ({len(dev)} windows): "
              f"median {statistics.median(dev) * 100:+.2f}%, worst {worst * 100:+.2f}%")
        print(f"windows {min(windows):.2f}-{max(windows):.2f} s, {min(updates)}-{max(updates)} "
              f"counter updates; idle power before the job {sorted(idle)} W")
    for name, doc in (("with --energy (run 1)", e1), ("with --energy (run 2)", e2),
                      ("without", plain)):
        if doc:
            j = doc["job"]
            print(f"seed job wall time {name}: {(j['finished_unix_ms'] - j['started_unix_ms']) / 1e3:.1f} s")
    return failed


def main(out):
    failed = contexts(out)
    failed = energy(out) or failed
    print("\nbars: " + ("MISSED (see above)" if failed else "all met"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
