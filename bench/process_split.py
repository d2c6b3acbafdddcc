#!/usr/bin/env python3
"""Runs one loadgen series and samples, for loadgen and every process under it, CPU time
(schedstat, all threads), context switches (all threads), read/write syscalls (/proc/PID/io)
and the machine's idle time, every 20 ms; reports the deltas over the middle of the run
(from 45% to 90% of loadgen's lifetime) per call, using the call rate loadgen reports.

    python3 bench/process_split.py LOADGEN --server SERVER [--server-arg ARG]... \
        --transport stdio --concurrency 16 --requests 40000 --warmup 8000 --max-seconds 60

Prints one JSON line: calls/s, p50, the window, the machine's idle share over it, and per
process (loadgen, the server, what the server spawned) CPU us, voluntary and involuntary
context switches, read and write syscalls and bytes per call, and the share of its CPU time
spent in the kernel. The sampler itself costs some CPU; run it the same way for each series.
"""
import json
import os
import subprocess
import sys
import time


def tree(root):
    kids = {}
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open(f'/proc/{p}/stat') as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rindex(')') + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(p))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out

def sample(pid):
    try:
        comm = open(f'/proc/{pid}/comm').read().strip()
        ns = vol = inv = 0
        for t in os.listdir(f'/proc/{pid}/task'):
            try:
                ns += int(open(f'/proc/{pid}/task/{t}/schedstat').read().split()[0])
                for l in open(f'/proc/{pid}/task/{t}/status'):
                    if l.startswith('voluntary_ctxt_switches'):
                        vol += int(l.split()[1])
                    elif l.startswith('nonvoluntary_ctxt_switches'):
                        inv += int(l.split()[1])
            except OSError:
                pass
        st = open(f'/proc/{pid}/stat').read()
        st = st[st.rindex(')') + 2:].split()
        ut, stt = int(st[11]), int(st[12])
        io = {}
        for l in open(f'/proc/{pid}/io'):
            k, v = l.split(':')
            io[k] = int(v)
        return comm, dict(ns=ns, vol=vol, inv=inv, syscr=io['syscr'], syscw=io['syscw'],
                          rchar=io['rchar'], wchar=io['wchar'], ut=ut, st=stt)
    except OSError:
        return None

def idle():
    f = open('/proc/stat').readline().split()[1:]
    v = list(map(int, f))
    return v[3] + v[4], sum(v[:8])  # idle+iowait, total (ticks)


def main():
    cmd = sys.argv[1:]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    samples = []
    while p.poll() is None:
        now = time.time()
        snap = {}
        if len(samples) < 40 or len(samples) % 10 == 0:
            pids = tree(p.pid)
        for pid in pids:
            s = sample(pid)
            if s:
                snap[pid] = s
        samples.append((now, idle(), snap))
        time.sleep(0.02)
    t1 = time.time()
    res = json.loads(p.stdout.read())
    life = t1 - t0
    a = min(samples, key=lambda s: abs(s[0] - (t0 + 0.45 * life)))
    b = min(samples, key=lambda s: abs(s[0] - (t0 + 0.9 * life)))
    dt = b[0] - a[0]
    calls = dt * res['calls_per_s']
    out = {'calls_per_s': res['calls_per_s'], 'p50_us': res['p50_us'], 'window_s': round(dt, 3),
           'idle_frac': round((b[1][0] - a[1][0]) / max(1, b[1][1] - a[1][1]), 3), 'procs': {}}
    for pid, (comm, x) in b[2].items():
        if pid not in a[2]:
            continue
        y = a[2][pid][1]
        d = {k: x[k] - y[k] for k in x}
        out['procs'][f'{comm}:{pid}'] = {
            'cpu_us': round(d['ns'] / 1000 / calls, 1), 'vol_cs': round(d['vol'] / calls, 2),
            'invol_cs': round(d['inv'] / calls, 2), 'reads': round(d['syscr'] / calls, 2),
            'writes': round(d['syscw'] / calls, 2), 'rbytes': round(d['rchar'] / calls),
            'wbytes': round(d['wchar'] / calls),
            'sys_share': round(d['st'] / max(1, d['ut'] + d['st']), 2)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
