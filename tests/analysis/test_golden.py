"""A golden file's recorded environment, and the sentence `check` says of it when cells moved."""

from __future__ import annotations

from typing import Any

from structbench.analysis.golden import RECORDED, GoldenFile, environment, machine

MADE: dict[str, Any] = {
    "python": "3.11.9",
    "platform": "Linux-6.8-x86_64",
    "cpu": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
    "cpus": 2,
    "simd_numpy": "AVX512_ICL",
    "simd_torch": "AVX512",
    "structbench": "0.9.0",
    "git": "0123456789abcdef0123456789abcdef01234567",
    "numpy": "2.3.5",
    "torch": "2.9.0",
    "scipy": "1.16.0",
    "scikit-learn": "1.7.0",
    "pydantic": "2.12.0",
}


def test_another_machine_is_named_by_every_entry_that_differs() -> None:
    here = MADE | {"simd_numpy": "X86_V3", "numpy": "2.4.6", "cpus": 8, "platform": "Linux-6.9-x86_64"}
    assert machine(MADE, here) == (
        "structbench check: the golden file was made on another machine (simd_numpy AVX512_ICL -> X86_V3, "
        "numpy 2.3.5 -> 2.4.6); the moved cells may be the machine, not the code."
    )


def test_another_machine_and_other_code_name_the_version_and_revision_too() -> None:
    here = MADE | {"cpu": "AMD EPYC 7763", "structbench": "0.10.0", "git": "fedcba9876543210" * 2}
    assert machine(MADE, here) == (
        "structbench check: the golden file was made on another machine (cpu Intel(R) Xeon(R) Platinum 8370C CPU "
        "@ 2.80GHz -> AMD EPYC 7763, and structbench 0.9.0 -> 0.10.0 and git 0123456789ab -> fedcba987654); "
        "the moved cells may be the machine, not the code."
    )


def test_the_same_machine_says_so_even_where_the_code_changed() -> None:
    here = MADE | {"structbench": "0.10.0", "git": None}
    assert machine(MADE, here) == (
        "structbench check: this machine matches the one the golden file was made on (cpu Intel(R) Xeon(R) "
        "Platinum 8370C CPU @ 2.80GHz, simd_numpy AVX512_ICL, simd_torch AVX512, numpy 2.3.5, torch 2.9.0); "
        "the moved cells come from the code or the data."
    )


def test_an_entry_one_side_lacks_is_not_compared_and_without_an_environment_nothing_is_said() -> None:
    no_torch = MADE | {"simd_torch": None}  # a process that never loaded torch
    assert "simd_torch" not in machine(MADE, no_torch) and "this machine matches" in machine(MADE, no_torch)
    assert machine(None, MADE) == "" and machine({}, MADE) == ""
    assert machine({"structbench": "0.9.0"}, MADE) == ""  # no machine entry to compare


def test_the_environment_is_optional_so_old_files_read_and_write_as_before() -> None:
    old = '{"structbench": "0.9.0", "tolerance": 0.0, "entries": []}'
    read = GoldenFile.model_validate_json(old)
    assert read.environment is None and "environment" not in read.model_dump()
    made = read.model_copy(update={"environment": MADE})
    assert GoldenFile.model_validate_json(made.model_dump_json()).environment == MADE


def test_the_recorded_environment_is_the_machine_and_code_without_the_threads() -> None:
    here = environment(with_torch=True)
    assert list(here) == list(RECORDED) and "threads" not in here
    assert here["simd_torch"] is not None and here["simd_numpy"] and here["cpu"] and here["numpy"]
