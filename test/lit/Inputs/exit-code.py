"""exit-code.py N CMD...: run CMD (stdout/stderr discarded) and succeed iff it exits with N.
lit's internal shell has no `$?`; tests of exit codes use this."""
import subprocess
import sys

want = int(sys.argv[1])
rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
if rc != want:
    print(f"exit-code.py: expected exit code {want}, got {rc}: {' '.join(sys.argv[2:])}")
    sys.exit(1)
