"""Writes tar bundles that must be refused, with Python's own tarfile (a real, independent tar writer).

Usage: hostile_tar.py GOOD_BUNDLE_DIR OUT_DIR
From the good bundle folder it writes OUT_DIR/{link,escape,absolute,extra}.tar: a member that is a symlink, one
whose name climbs out with `..`, one with an absolute name, and one the lock does not name; each otherwise holds
the good bundle's files. Prints the paths as JSON.
"""
import io, json, os, sys, tarfile

good, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
members = []
for folder, _, names in os.walk(good):
    for name in names:
        path = os.path.join(folder, name)
        members.append((os.path.relpath(path, good), path))
members.sort()


def write(name, extra):
    target = os.path.join(out, name + ".tar")
    with tarfile.open(target, "w", format=tarfile.USTAR_FORMAT) as archive:
        for arcname, path in members:
            archive.add(path, arcname=arcname)
        extra(archive)
    return target


def file_member(archive, arcname, data=b"x"):
    info = tarfile.TarInfo(arcname)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def link(archive):
    info = tarfile.TarInfo("models/acme/tiny/evil")
    info.type = tarfile.SYMTYPE
    info.linkname = "/etc/passwd"
    archive.addfile(info)


paths = {
    "link": write("link", link),
    "escape": write("escape", lambda a: file_member(a, "models/acme/tiny/../../../escaped.txt")),
    "absolute": write("absolute", lambda a: file_member(a, "/tmp/modeldepot-absolute.txt")),
    "extra": write("extra", lambda a: file_member(a, "models/acme/tiny/extra.bin")),
}
print(json.dumps(paths))
