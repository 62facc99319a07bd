"""Where the cgroup v2 file system is mounted (/sys/fs/cgroup on a unified
host, /sys/fs/cgroup/unified on a hybrid one): --cgroup takes v2 paths."""


def cgroup2_root(mountinfo="/proc/self/mountinfo"):
    """The first cgroup2 mount point, or None when none is mounted."""
    with open(mountinfo) as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    return None
