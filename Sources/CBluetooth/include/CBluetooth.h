// What Swift cannot spell by itself: the HCI socket address and channel constants of
// BlueZ's <bluetooth/hci.h> (Debian: libbluetooth-dev), and termios for UARTs.
// Deliberately no logic here; everything else is Swift.
#ifndef CBLUETOOTH_H
#define CBLUETOOTH_H

#include <sys/socket.h>
#include <termios.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

#include <pthread.h>

// glibc declares this only under _GNU_SOURCE; naming the reader thread makes it visible
// in /proc/PID/task/*/comm, top -H and gdb.
int pthread_setname_np(pthread_t thread, const char *name);

#endif
