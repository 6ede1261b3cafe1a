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

#endif
