#!/usr/bin/env python3
"""Tables of scripts/nessie-scenarios.sh's contention and energy sweeps,
from the `locus sim` JSON of each point (results/nessie/raw).

  summarize.py contention RAW "HOGS..."     -> contention.csv on stdout
  summarize.py energy RAW "CLIENTS..."      -> energy.csv on stdout
  summarize.py energy-summary ENERGY_CSV    -> energy-summary.csv on stdout

Utilisation of a point is its throughput over the highest throughput the
same mode reached in the sweep (closed-loop clients: the offered load grows
with the clients until the system saturates). The summary interpolates
each mode's total power linearly in utilisation at 20% and 80%, and gives
it above the hosts' idle power (scenarios/nessie/energy.toml's profile).
"""
import csv
import json
import sys
import tomllib


def run_of(raw, name):
    return json.load(open(f"{raw}/{name}.json"))["runs"][0]


def mean_latency_us(run):
    n = sum(o["count"] for o in run["ops"])
    return sum(o["count"] * o["latency_ns"]["mean"] for o in run["ops"]) / max(n, 1) / 1e3


def contention(raw, hogs):
    print("hogs_per_host,mode,throughput_ops_per_s,mean_latency_us,failed,ratio_to_no_hogs,ratio_to_client")
    base = {m: run_of(raw, f"hogs-{hogs[0]}-{m}")["throughput_ops_per_s"] for m in ("client", "server", "hybrid")}
    for h in hogs:
        runs = {m: run_of(raw, f"hogs-{h}-{m}") for m in ("client", "server", "hybrid")}
        for m, r in runs.items():
            t = r["throughput_ops_per_s"]
            failed = sum(o["failed"] for o in r["ops"])
            print(f"{h},{m},{t:.1f},{mean_latency_us(r):.2f},{failed},{t / base[m]:.3f},"
                  f"{t / runs['client']['throughput_ops_per_s']:.3f}")


def energy(raw, clients):
    print("mode,clients,throughput_ops_per_s,utilisation,server_host_w,client_host_w,power_w,joules_per_op")
    for m in ("client", "server"):
        runs = [(c, run_of(raw, f"energy-{c}-{m}")) for c in clients]
        peak = max(r["throughput_ops_per_s"] for _, r in runs)
        for c, r in runs:
            hosts = r["power"]
            servers = [h["average_w"] for h in hosts if h["name"].startswith("server")]
            chosts = [h["average_w"] for h in hosts if h["name"].startswith("chost")]
            t = r["throughput_ops_per_s"]
            print(f"{m},{c},{t:.1f},{t / peak:.4f},{sum(servers) / len(servers):.4f},"
                  f"{sum(chosts) / len(chosts):.4f},{r['extra']['power_w']:.4f},{r['extra']['joules_per_op']:.4e}")


def at_utilisation(points, u):
    points = sorted(points)
    for (u0, p0), (u1, p1) in zip(points, points[1:]):
        if u0 <= u <= u1 and u1 > u0:
            return p0 + (u - u0) / (u1 - u0) * (p1 - p0)
    raise SystemExit(f"utilisation {u} is outside the sweep ({points[0][0]:.2f} to {points[-1][0]:.2f}): "
                     "add client counts to CLIENTS")


def energy_summary(path):
    scenario = tomllib.load(open("scenarios/nessie/energy.toml", "rb"))["platform"]
    hosts = scenario["servers"] + scenario["client_hosts"]
    idle_w = hosts * scenario["power"]["idle_w"]
    rows = list(csv.DictReader(open(path)))
    print("utilisation,mode,power_w,above_idle_w,client_saves_of_server_above_idle")
    for u in (0.2, 0.8):
        above = {}
        for m in ("server", "client"):
            pts = [(float(r["utilisation"]), float(r["power_w"])) for r in rows if r["mode"] == m]
            above[m] = at_utilisation(pts, u) - idle_w
        for m in ("server", "client"):
            saves = 1 - above["client"] / above["server"] if m == "client" else 0.0
            print(f"{u},{m},{above[m] + idle_w:.4f},{above[m]:.4f},{saves:.3f}")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "contention":
        contention(sys.argv[2], sys.argv[3].split())
    elif what == "energy":
        energy(sys.argv[2], sys.argv[3].split())
    elif what == "energy-summary":
        energy_summary(sys.argv[2])
    else:
        raise SystemExit(f"summarize.py: unknown table {what}")
