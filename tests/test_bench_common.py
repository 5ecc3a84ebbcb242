"""The benchmarks' CPU accounting (``bench.common.ProcessCpu``): what each process of an emulator run spent."""

from __future__ import annotations

import time

import psutil

from bench.common import ProcessCpu, emulator_suite_processes, process_role, role_of_command


def burn(seconds: float) -> None:
    until = time.process_time() + seconds
    while time.process_time() < until:
        sum(range(1_000))


def test_this_process_is_the_bench_and_its_cpu_is_counted():
    me = psutil.Process()
    assert me.pid in {process.pid for process in emulator_suite_processes()}
    assert process_role(me) == "bench"
    # only this process is read: under the emulators the run's other processes (another test worker's children)
    # may start and end within the measurement, and would be reported lost
    cpu = ProcessCpu(lambda: [me])
    cpu.start()
    burn(0.3)
    seconds = cpu.stop()
    assert 0.25 <= seconds["bench"] < 5
    assert cpu.lost == 0


def test_each_emulator_process_is_known_by_its_command_line():
    java = "/opt/jdk/bin/java -jar /repo/.cache/firestore-emulator-wrapper.jar --host 127.0.0.1"
    assert role_of_command(java) == "firestore_emulator"
    worker = "/repo/functions/venv/bin/python /repo/functions/venv/bin/functions-framework"
    assert role_of_command(worker) == "functions_worker"
    assert role_of_command("node /repo/node_modules/.bin/firebase emulators:exec --only firestore") == "firebase_tools"
    assert role_of_command("/usr/bin/java -jar cloud-pubsub-emulator.jar") == "other"


def test_a_process_gone_before_the_stop_is_reported_lost():
    cpu = ProcessCpu()
    cpu._start = {2**22 + 7: ("firestore_emulator", 1.0)}  # a pid no longer there at the stop
    cpu.stop()
    assert cpu.lost == 1
