#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
#if DEBUG
    import Synchronization
#endif

/// Octets of a secret (a private key, the DHKey, the MacKey, an LTK, IRK or CSRK, a passkey
/// as TK or ra): one buffer of its own, zeroed when the last owner lets go.
///
/// A class, so copies of a value holding it (a ``P256PrivateKey``, a bond) share the one
/// buffer, and its `deinit` runs once, when the last of them is gone. The zeroing is
/// `explicit_bzero` (`memset_s` on Darwin): a write the optimizer may not drop because
/// the memory is about to be freed.
///
/// What it does not cover: octets copied out of it (``bytes``, an `Array` passed to an API
/// that takes one) are ordinary values nobody zeroes, and neither are the temporaries of
/// the arithmetic (AES round keys, P-256 limbs on the stack).
///
/// Immutable once made; `==` compares in time independent of the octets; `description`
/// never shows them.
public final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only by the initializers, before the object is
    // shared, and read-only after.

    /// The buffer, `count` octets (at least one allocated, so an empty secret has an address).
    private let storage: UnsafeMutableRawPointer
    /// How many octets.
    public let count: Int

    /// A secret of `count` octets, zero until `initialize` writes them; `initialize` gets
    /// the buffer itself, so the octets need not pass through an `Array` on the way.
    public init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) -> Void = { _ in }) {
        precondition(count >= 0, "SecretBytes: a negative count")
        self.count = count
        storage = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        initialize(UnsafeMutableRawBufferPointer(start: storage, count: count))
    }

    /// A copy of `bytes` (which, if it is an `Array`, is still the caller's to wipe:
    /// ``wipe(_:)``).
    public convenience init(_ bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { buffer in _ = buffer.initializeMemory(as: UInt8.self, from: bytes) }
    }

    deinit {
        secureZero(storage, max(count, 1))
        #if DEBUG
            SecretBytesProbe.released(UnsafeRawBufferPointer(start: storage, count: count))
        #endif
        storage.deallocate()
    }

    /// Calls `body` with the octets, read-only. The pointer is valid only inside `body`.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withExtendedLifetime(self) { () throws(Failure) -> Result in
            try body(UnsafeRawBufferPointer(start: storage, count: count))
        }
    }

    /// A copy of the octets in an ordinary `Array`, for an API that takes one. Nothing
    /// zeroes that copy: prefer ``withTemporaryCopy(_:)``, which wipes it afterwards.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Calls `body` with the octets copied into an `Array`, for an API that takes one, and
    /// wipes the copy when `body` returns. `body` must not keep the array (a copy it keeps
    /// is its own, and not wiped).
    public func withTemporaryCopy<Result, Failure: Error>(_ body: ([UInt8]) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        var copy = bytes
        defer { Self.wipe(&copy) }
        return try body(copy)
    }

    /// The same octets in reverse order: a key turned between the toolbox's order (most
    /// significant octet first) and the wire's (least significant first).
    public func reversed() -> SecretBytes {
        SecretBytes(count: count) { target in
            withUnsafeBytes { source in
                for index in 0..<count { target[index] = source[count - 1 - index] }
            }
        }
    }

    /// Zeroes the octets of `bytes` in place, with the same unremovable write. For an
    /// `Array` a secret had to pass through: the array must be uniquely referenced, or
    /// only this copy of it is zeroed.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { secureZero(base, buffer.count) }
        }
    }
}

extension SecretBytes: Equatable {
    /// Whether both hold the same octets. The lengths are compared first (they are not
    /// secret); the octets all of them, whatever they hold, with no early exit.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                var difference: UInt8 = 0
                for index in 0..<a.count { difference |= a[index] ^ b[index] }
                return difference == 0
            }
        }
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `<redacted N octets>`, never the octets.
    public var description: String { "<redacted \(count) octets>" }
    /// `<redacted N octets>`, never the octets.
    public var debugDescription: String { description }
    /// The count only, so `dump` and reflection show no address to read the octets at.
    public var customMirror: Mirror { Mirror(self, children: ["count": count]) }
}

/// Zeroes `count` octets at `pointer` with a write the compiler may not remove as dead.
private func secureZero(_ pointer: UnsafeMutableRawPointer, _ count: Int) {
    #if canImport(Darwin)
        _ = memset_s(pointer, count, 0, count)
    #else
        explicit_bzero(pointer, count)
    #endif
}

#if DEBUG
    /// Debug builds only: what the tests use to read a secret's storage as it is freed, after
    /// the zeroing and before `deallocate`, so a test fails if the zeroing goes.
    enum SecretBytesProbe {
        /// Addresses being watched, and what each held when it was released (nil until then).
        private static let watched = Mutex<[UInt: [UInt8]?]>([:])

        /// Watches the buffer of `secret`; returns its address for ``contentsAtRelease(_:)``.
        static func watch(_ secret: SecretBytes) -> UInt {
            let address = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
            watched.withLock { $0[address] = .some(nil) }
            return address
        }

        /// What the buffer at `address` held when it was freed; nil if it has not been freed.
        /// Stops watching it once freed.
        static func contentsAtRelease(_ address: UInt) -> [UInt8]? {
            watched.withLock { watched in
                guard case let .some(.some(contents)) = watched[address] else { return nil }
                watched[address] = nil
                return contents
            }
        }

        /// Called by `deinit` with the buffer, zeroed, about to be freed.
        static func released(_ buffer: UnsafeRawBufferPointer) {
            let address = UInt(bitPattern: buffer.baseAddress)
            watched.withLock { watched in
                // Only the first release counts: the allocator may hand the address out again.
                if case .some(.none) = watched[address] { watched[address] = .some(Array(buffer)) }
            }
        }
    }
#endif
