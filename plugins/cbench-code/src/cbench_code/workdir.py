"""Samples' directories: made private to one sample, removed after it, however deep it nested them."""

from __future__ import annotations

import os

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def make(root: str, name: str, owner: int | None) -> str:
    """A directory only its sample (and the server) may enter; ``owner``: the uid samples run as."""
    path = os.path.join(root, name)
    os.mkdir(path, 0o700)
    if owner is not None:
        os.chown(path, owner, owner)
    return path


def remove(path: str) -> None:
    """Remove a directory tree, without recursion and without long paths.

    A sample can nest directories thousands deep (``shutil.rmtree`` recurses once per level): this
    walks down by descriptor, reading each directory once, and climbs back through ``..``.  The
    sample's processes are dead by now, so nothing moves the tree meanwhile.
    """
    try:
        os.rmdir(path)  # the common case: the sample left nothing behind
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    fd = _open_dir(path)
    names: list[str] = []  # the way down
    try:
        todo = [_clear_files(fd)]  # per level on the way down: its subdirectories still to remove
        while todo:
            if todo[-1]:
                name = todo[-1].pop()
                below = _open_dir(name, fd)
                os.close(fd)
                fd = below
                names.append(name)
                todo.append(_clear_files(fd))
                continue
            todo.pop()  # this level is empty now: climb and remove it
            if names:
                above = os.open("..", _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = above
                os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(path)


def _open_dir(name: str, dir_fd: int | None = None) -> int:
    """Open a directory, never through a symbolic link, and make it the server's to empty.

    A sample may have locked its directories (mode 0): only a server that is not root minds.
    """
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:  # a symbolic link would have failed with ELOOP: this is a directory
        os.chmod(name, 0o700, dir_fd=dir_fd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    os.fchmod(fd, 0o700)
    return fd


def _clear_files(fd: int) -> list[str]:
    """Unlink all but the subdirectories of the directory ``fd``; return the subdirectories."""
    subdirectories = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return subdirectories
