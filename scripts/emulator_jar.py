"""Build a runnable wrapper jar around the Debian-packaged Firestore emulator.

The ``google-cloud-cli-firestore-emulator`` package ships the emulator as a jar
without a ``Main-Class``, so ``java -jar`` cannot start it, and firebase-tools
runs exactly ``java -jar $FIRESTORE_EMULATOR_BINARY_PATH``.  The wrapper is a
jar holding only a manifest that names the main class and puts the packaged jar
on the class path.  Prints the wrapper's path, or nothing when the packaged jar
is absent (firebase-tools then downloads its own emulator, as on a laptop).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

PACKAGED_JAR = Path("/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar")
MAIN_CLASS = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"


def manifest_line(name: str, value: str) -> str:
    """One manifest attribute, folded at 72 bytes as the jar specification requires."""
    raw = f"{name}: {value}".encode()
    chunks = [raw[:72]] + [b" " + raw[i : i + 71] for i in range(72, len(raw), 71)]
    return "\r\n".join(chunk.decode() for chunk in chunks) + "\r\n"


def build_wrapper(packaged: Path, target: Path) -> Path:
    manifest = (
        manifest_line("Manifest-Version", "1.0")
        + manifest_line("Main-Class", MAIN_CLASS)
        + manifest_line("Class-Path", packaged.resolve().as_uri())
        + "\r\n"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", manifest)
    return target


def main() -> int:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".cache/firestore-emulator-wrapper.jar")
    if not PACKAGED_JAR.is_file():
        return 0
    print(build_wrapper(PACKAGED_JAR, target).resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
