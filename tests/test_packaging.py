"""What a user installs: the sdist and the wheel build from a clean copy of the repository and
pass ``twine check``; the default install is lean (no TLS or QUIC stack); a protocol whose extra
is missing fails its test naming the extra."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import sentences

import overheadbench

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The sdist and the wheel, built from the files git tracks (a clean clone's), without network."""
    copy, out = tmp_path_factory.mktemp("clean"), tmp_path_factory.mktemp("dist")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_bytes(source.read_bytes())
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(copy)]
    subprocess.run(command, capture_output=True, check=True, timeout=300)
    return sorted(out.iterdir())


def test_the_sdist_and_the_wheel_build_and_pass_twine_check(built: list[Path]) -> None:
    version = overheadbench.__version__
    assert [path.name for path in built] == [
        f"overheadbench-{version}-py3-none-any.whl",
        f"overheadbench-{version}.tar.gz",
    ]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, built)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_wheel_is_the_package_and_the_default_install_is_lean(built: list[Path]) -> None:
    with zipfile.ZipFile(built[0]) as wheel:
        files = wheel.namelist()
        metadata = wheel.read(f"overheadbench-{overheadbench.__version__}.dist-info/METADATA").decode()
    assert "overheadbench/py.typed" in files and "overheadbench/http/quic_repairs.py" in files
    assert {"overheadbench/report/page/page.css", "overheadbench/report/page/page.js"} <= set(files)  # the page's own
    assert not [name for name in files if name.startswith(("tests/", "benchmarks/", "docs/"))]
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    default = [requirement for requirement in required if "extra ==" not in requirement]
    assert not [r for r in default if r.startswith(("trustme", "aioquic", "cryptography")) or "[h3]" in r]
    for extra in ("tls", "h3", "plot", "bench"):
        assert f"Provides-Extra: {extra}" in metadata
    assert 'trustme>=1.1; extra == "tls"' in required and 'hypercorn[h3]>=0.17; extra == "h3"' in required


def test_a_protocol_whose_extra_is_missing_fails_its_test_naming_the_extra(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from overheadbench.http import server

    monkeypatch.setattr(server, "installed", lambda module: module != "aioquic")
    pytester.makepyfile(
        """
        def test_h3(asgi_server):
            asgi_server(protocol="h3")

        def test_h2c(asgi_server):
            assert asgi_server(protocol="h2c").client().get("/").status_code == 200
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*asgi_server(protocol='h3'): protocol 'h3' needs aioquic, which the default install leaves out: "
            "pip install 'overheadbench[[]h3]'"  # [[]: a literal [ to fnmatch
        ]
    )
    result.stdout.no_fnmatch_line("*server.py:*")
