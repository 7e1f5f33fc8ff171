"""Both an editable and a wheel install expose the catalog folders inside ``amqpspec``."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_editable_install_maps_catalog_folders():
    import amqpspec.conformance
    import amqpspec.fuzz
    import amqpspec.reports
    import amqpspec.scenarios

    assert Path(amqpspec.conformance.__file__).parent == ROOT / "conformance"
    assert Path(amqpspec.reports.__file__).parent == ROOT / "reports"


def test_wheel_contents_and_install(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, stdin=subprocess.DEVNULL)
    [wheel] = tmp_path.glob("amqpspec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top <= {"amqpspec", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, top
    assert "amqpspec/conformance/amqp091/s4_2_2_protocol_header.py" in names
    assert "amqpspec/reports/console.py" in names and "amqpspec/fuzz/__init__.py" in names
    assert "amqpspec/specdata/amqp-0-9-1/amqp0-9-1.xml" in names
    # installed into a fresh environment (dependencies from the running one), it runs
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, stdin=subprocess.DEVNULL)
    where = subprocess.run([py, "-c", "import amqpspec.conformance as c; print(c.__file__)"], check=True,
                           capture_output=True, text=True, cwd=tmp_path).stdout
    assert str(venv) in where
    listed = subprocess.run([venv / "bin" / "amqpspec", "run", "amqp://127.0.0.1:1/", "--protocol", "0-9-1", "--dry-run"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert listed.returncode == 0 and "amqp091/4.2.2/valid-header" in listed.stdout, listed.stderr
    clauses = subprocess.run([venv / "bin" / "amqpspec", "clauses", "--protocol", "0-9-1"], capture_output=True,
                             text=True, cwd=tmp_path)
    assert clauses.returncode == 0 and "175 clauses" in clauses.stdout
