// What Swift cannot spell by itself: the HCI socket address and channel constants of
// BlueZ's <bluetooth/hci.h> (Debian: libbluetooth-dev), and termios for UARTs.
// Deliberately no logic here; everything else is Swift.
#ifndef CBLUETOOTH_H
#define CBLUETOOTH_H

#include <sys/socket.h>
#include <termios.h>
#include <poll.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

// sendmmsg (many datagrams per system call) and its message vector, which glibc declares
// only under _GNU_SOURCE. Declared here only when the
// headers did not already (a build with _GNU_SOURCE gets glibc's own).
#ifndef __USE_GNU
struct mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};
int sendmmsg(int fd, struct mmsghdr *vmessages, unsigned int vlen, int flags);
#endif

#include <stdio.h>

// Flushes stdout alone. Swift 6 will not name the C global `stdout`, and fflush(NULL), the
// spelling it does allow, takes every stream's lock: stdin's too, which a thread blocked
// reading a line holds, so output would wait for input.
static inline int bluejay_flush_stdout(void) { return fflush(stdout); }

#endif
