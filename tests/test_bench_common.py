"""The benchmarks' CPU accounting (``bench.common.ProcessCpu``): what each process of an emulator run spent."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from bench.common import ProcessCpu, emulator_suite_processes, process_role


def burn(seconds: float) -> None:
    until = time.process_time() + seconds
    while time.process_time() < until:
        sum(range(1_000))


def test_this_process_is_the_bench_and_its_cpu_is_counted():
    me = psutil.Process()
    assert me.pid in {process.pid for process in emulator_suite_processes()}
    assert process_role(me) == "bench"
    cpu = ProcessCpu()
    cpu.start()
    burn(0.3)
    seconds = cpu.stop()
    assert 0.25 <= seconds["bench"] < 5
    assert cpu.lost == 0


def test_a_worker_is_known_by_its_command_line():
    # a process whose command line names functions-framework, as the Functions emulator's Python worker does
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", "functions-framework"], stdout=subprocess.DEVNULL
    )
    try:
        assert process_role(psutil.Process(child.pid)) == "functions_worker"
    finally:
        child.kill()
        child.wait()


def test_a_process_gone_before_the_stop_is_reported_lost():
    cpu = ProcessCpu()
    cpu._start = {2**22 + 7: ("firestore_emulator", 1.0)}  # a pid no longer there at the stop
    cpu.stop()
    assert cpu.lost == 1
