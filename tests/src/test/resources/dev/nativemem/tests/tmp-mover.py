# A process of another user that looks like a HotSpot JVM to attach (it maps a file named
# libjvm.so and catches SIGQUIT) and, on SIGQUIT, opens its attach socket in its /tmp and then
# turns its /tmp into another directory (argv[1]) through a bind mount in a user and mount
# namespace of its own, so that a second look at /proc/<pid>/root/tmp lands there. It answers
# each attach request with success and no properties.
import ctypes, mmap, os, signal, socket, sys, time

target = sys.argv[1]
fake = os.path.join(sys.argv[2], "libjvm.so")
with open(fake, "wb") as f:
    f.write(b"\0" * 4096)
mapped = mmap.mmap(os.open(fake, os.O_RDONLY), 4096, prot=mmap.PROT_READ)
libc = ctypes.CDLL(None, use_errno=True)
listener = None


def move_tmp(*_):
    global listener
    path = "/tmp/.java_pid%d" % os.getpid()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(8)
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
        print("unshare failed", ctypes.get_errno(), flush=True)
        return
    open("/proc/self/setgroups", "w").write("deny")
    open("/proc/self/uid_map", "w").write("0 %d 1" % uid)
    open("/proc/self/gid_map", "w").write("0 %d 1" % gid)
    if libc.mount(target.encode(), b"/tmp", None, 4096 | 16384, None) != 0:  # MS_BIND | MS_REC
        print("mount failed", ctypes.get_errno(), flush=True)
    print("MOVED", flush=True)


signal.signal(signal.SIGQUIT, move_tmp)
# A JVM blocks SIGQUIT in its threads, and a process it starts inherits the mask.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGQUIT])
print("READY %d" % os.getpid(), flush=True)
deadline = time.time() + 120
while time.time() < deadline:
    if listener is None:
        time.sleep(0.05)
        continue
    listener.settimeout(1)
    try:
        client, _ = listener.accept()
    except socket.timeout:
        continue
    client.settimeout(5)
    request = b""
    try:
        while request.count(b"\0") < 5:
            chunk = client.recv(4096)
            if not chunk:
                break
            request += chunk
    except socket.timeout:
        pass
    client.sendall(b"0\nreturn code: 0\n" if b"load" in request else b"0\n")
    client.close()
