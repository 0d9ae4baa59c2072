# A local account's abuse of the service, run as the desktop user by
# cmd/walletgate's TestServiceAsInstalledOutlivesTheDesktopUsersAbuse:
#   abuse_client.py conns UNIX_SOCKET|HOST:PORT N    open N connections, hold them until stdin ends
#   abuse_client.py lines UNIX_SOCKET N              open N connections, send each 4 MiB with no newline, hold them until stdin ends
# It prints "closed K" (the connections the service closed within 2 s), then "held", and waits.
import socket, sys, select, time

mode, addr, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def dial():
    if ":" in addr:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
    return s

conns = [dial() for _ in range(n)]
if mode == "lines":
    line = b"x" * (4 << 20)
    for s in conns:
        try:
            s.sendall(line)
        except OSError:
            pass  # a refused one
closed = 0
deadline = time.time() + 2
for s in conns:
    s.setblocking(False)
for s in conns:
    r, _, _ = select.select([s], [], [], max(0, deadline - time.time()))
    if r:
        try:
            if s.recv(1) == b"":
                closed += 1
        except OSError:
            closed += 1
print("closed", closed, flush=True)
print("held", flush=True)
sys.stdin.read()
