"""A process's memory as Linux reports it, for the gateway's memory benchmarks
(tool-memory.py, peer-tool-memory.py)."""
import time


def memory(pid):
    """VmRSS (resident now) and VmHWM (the peak), in kB, of process `pid`."""
    status = open(f"/proc/{pid}/status").read()
    return {k: int(v.split()[0]) for k, v in (l.split(":", 1) for l in status.splitlines())
            if k in ("VmRSS", "VmHWM")}


def settled(pid):
    """memory(pid) once VmRSS has stopped moving: three readings half a second apart within
    1%, at most a minute on (a catalog may be rebuilt once more after its first answer)."""
    readings = [memory(pid)["VmRSS"]]
    for _ in range(120):
        time.sleep(0.5)
        readings.append(memory(pid)["VmRSS"])
        last = readings[-3:]
        if len(last) == 3 and max(last) - min(last) <= max(last) // 100:
            break
    return memory(pid)
