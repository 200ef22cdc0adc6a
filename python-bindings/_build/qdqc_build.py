"""qdqc_build: a minimal PEP 517 build backend for the pure-Python qdqc package.

It writes a wheel (a zip of qdqc/*.py plus .dist-info) with the standard library only, so
installing needs no network and no setuptools. The prefix qdqc was installed into can be baked
in with the QDQC_PREFIX environment variable at build time (qdqc/_prefix.py); the package then
finds libqdqc there when QDQC_LIBRARY is unset.
"""
import base64
import hashlib
import os
import zipfile

NAME = "qdqc"
VERSION = "0.1.0"
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TAG = "py3-none-any"
_DIST = f"{NAME}-{VERSION}.dist-info"


def _metadata():
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {VERSION}\n"
        "Summary: Python bindings of qdqc, an ahead-of-time compiler for quantized QDQ networks\n"
        "Requires-Python: >=3.9\nRequires-Dist: numpy\n"
    )


def _files():
    """(archive name, bytes) of every file of the wheel except RECORD."""
    out = []
    pkg = os.path.join(_ROOT, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") and name != "_prefix.py":
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    prefix = os.environ.get("QDQC_PREFIX", "")
    out.append((f"{NAME}/_prefix.py",
                f'"""Set at build time from QDQC_PREFIX."""\nPREFIX = {prefix!r}\n'.encode()))
    out.append((f"{_DIST}/METADATA", _metadata().encode()))
    out.append((f"{_DIST}/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: qdqc_build\nRoot-Is-Purelib: true\n"
        f"Tag: {_TAG}\n").encode()))
    out.append((f"{_DIST}/top_level.txt", f"{NAME}\n".encode()))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _DIST)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(_metadata())
    return _DIST


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = f"{NAME}-{VERSION}-{_TAG}.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for name, data in _files():
            z.writestr(name, data)
            record.append(_record_line(name, data))
        record.append(f"{_DIST}/RECORD,,\n")
        z.writestr(f"{_DIST}/RECORD", "".join(record))
    return wheel
