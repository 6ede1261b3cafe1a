import COpenSSL
import Glibc
import Synchronization

/// A TLS client session (OpenSSL) over memory BIOs: the connection reads and writes the
/// socket itself and hands the bytes through here, so a turn's records leave in the same one
/// write as a plain connection's packets, and no OpenSSL call ever touches the socket (or
/// raises SIGPIPE on a closed one).
///
/// The server's certificate must chain to a trusted authority (the system's, or the
/// configured `ca_file`) and name the broker's host (SNI is sent for a host name).
final class TLSSession {
    private let ssl: OpaquePointer
    /// Bytes from the network, for OpenSSL to read.
    private let input: OpaquePointer
    /// Bytes OpenSSL wrote, for the network.
    private let output: OpaquePointer
    /// Where ``read(into:)`` has OpenSSL decrypt, before the bytes join the caller's.
    private var chunk = [UInt8](repeating: 0, count: 16_384)

    /// What went wrong, with OpenSSL's reason.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// The server's certificate was the cause (not a plain port's reply).
        var certificate: Bool
    }

    /// A session for `host` (checked against the certificate), trusting `caFile` when given,
    /// else the system's authorities.
    init(host: String, caFile: String?) throws(Failure) {
        guard let context = Self.context(caFile: caFile) else {
            throw Failure(description: "TLS set-up failed: \(Self.errorText())", certificate: caFile != nil)
        }
        guard let ssl = SSL_new(context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw Failure(description: "TLS set-up failed: \(Self.errorText())", certificate: false)
        }
        // An empty input BIO means "more to come", not the end of the stream.
        BIO_ctrl(input, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        BIO_ctrl(output, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        (self.ssl, self.input, self.output) = (ssl, input, output)
        let literal = Self.isAddressLiteral(host)
        if literal {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            SSL_set1_host(ssl, host)
            _ = host.withCString {
                SSL_ctrl(
                    ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                    UnsafeMutableRawPointer(mutating: $0))
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Where the handshake stands after a step.
    enum Handshake {
        case inProgress
        case done
    }

    /// Takes the handshake a step further with what was received so far.
    func handshake() throws(Failure) -> Handshake {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .done }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .inProgress
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != Int(X509_V_OK) {
                throw Failure(
                    description: "certificate verify failed: \(String(cString: X509_verify_cert_error_string(verify)))",
                    certificate: true)
            }
            throw Failure(description: Self.errorText(), certificate: false)
        }
    }

    /// Bytes received from the network.
    func received(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        BIO_write(input, base, Int32(bytes.count))
    }

    /// The application data decrypted so far, appended to `plain`.
    func read(into plain: inout [UInt8]) throws(Failure) {
        while true {
            ERR_clear_error()
            let count = chunk.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                plain += chunk[..<Int(count)]
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
            case SSL_ERROR_ZERO_RETURN:
                throw Failure(description: "the server closed the TLS session", certificate: false)
            default: throw Failure(description: Self.errorText(), certificate: false)
            }
        }
    }

    /// Encrypts `plain` (all of it: memory BIOs take any amount).
    func write(_ plain: ArraySlice<UInt8>) throws(Failure) {
        guard !plain.isEmpty else { return }
        ERR_clear_error()
        let count = plain.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        guard count == plain.count else { throw Failure(description: Self.errorText(), certificate: false) }
    }

    /// Moves what OpenSSL wrote (records, handshake messages) to `wire`, for the socket.
    func drain(into wire: inout [UInt8]) {
        var pending = Int(BIO_ctrl_pending(output))
        while pending > 0 {
            let start = wire.count
            wire += repeatElement(0, count: pending)
            let count = wire.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress! + start, Int32(pending)) }
            wire.removeLast(pending - max(0, Int(count)))
            guard count > 0 else { return }
            pending = Int(BIO_ctrl_pending(output))
        }
    }

    /// OpenSSL's queued errors, oldest first, as one line.
    private static func errorText() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [UInt8](repeating: 0, count: 256)
            buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self))
        }
        return reasons.isEmpty ? "the TLS session failed" : "OpenSSL: " + reasons.joined(separator: "; ")
    }

    private static func isAddressLiteral(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// An `SSL_CTX`: OpenSSL's contexts may be shared by threads once set up.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// The client contexts made so far, by authority file; kept for the process's life.
    private static let made = Mutex<[String: Context]>([:])

    private static func context(caFile: String?) -> OpaquePointer? {
        made.withLock { made -> Context? in
            if let context = made[caFile ?? ""] { return context }
            guard let context = SSL_CTX_new(TLS_client_method()) else { return nil }
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            let loaded =
                if let caFile { SSL_CTX_load_verify_locations(context, caFile, nil) == 1 } else {
                    SSL_CTX_set_default_verify_paths(context) == 1
                }
            guard loaded else {
                SSL_CTX_free(context)
                return nil
            }
            made[caFile ?? ""] = Context(pointer: context)
            return Context(pointer: context)
        }?.pointer
    }
}
