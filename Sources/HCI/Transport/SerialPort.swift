import BluetoothCore
#if canImport(Glibc)
    import Glibc
#endif
import CBluetooth

/// A UART in raw mode for H4 (a controller on /dev/ttyACM0, /dev/ttyS1, a pty).
enum SerialPort {
    static let supportedRates = [
        9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 500_000, 576_000,
        921_600, 1_000_000, 1_152_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000,
        3_500_000, 4_000_000,
    ]

    /// The termios speed constant for a baud rate, or nil when there is none.
    static func speedConstant(_ rate: Int) -> speed_t? {
        switch rate {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_152_000: speed_t(B1152000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 2_500_000: speed_t(B2500000)
        case 3_000_000: speed_t(B3000000)
        case 3_500_000: speed_t(B3500000)
        case 4_000_000: speed_t(B4000000)
        default: nil
        }
    }

    static func open(path: String, baudRate: Int, flowControl: Bool) throws(TransportError) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .openFailed(what: path, errno: errno) }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let code = errno
            close(fd)
            throw .openFailed(what: "\(path) (not a serial port?)", errno: code)
        }
        cfmakeraw(&settings)
        let speed = speedConstant(baudRate) ?? speed_t(B115200)
        cfsetispeed(&settings, speed)
        cfsetospeed(&settings, speed)
        settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
        if flowControl { settings.c_cflag |= tcflag_t(CRTSCTS) } else { settings.c_cflag &= ~tcflag_t(CRTSCTS) }
        // Block until at least one byte; the reader thread waits in poll anyway.
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            let code = errno
            close(fd)
            throw .openFailed(what: "\(path) at \(baudRate) baud", errno: code)
        }
        tcflush(fd, TCIOFLUSH)
        return fd
    }
}
