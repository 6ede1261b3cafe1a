import Testing

// `#expect(throws: E.self)` returns the error it caught from Swift Testing 6.1 on (ST-0006);
// 6.0's returns nothing. These return it under both, for a test that looks into the error:
// `let error = expectError(E.self) { try … }`. An issue is recorded, as by #expect, when
// the body throws nothing or another error (then the result is nil).

/// The error of type `E` that `body` throws, recorded as #expect(throws:) records it.
@discardableResult
package func expectError<E: Error>(
    _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation,
    performing body: () throws -> Void
) -> E? {
    #if compiler(>=6.1)
        return #expect(throws: type, sourceLocation: sourceLocation, performing: body)
    #else
        var caught: E?
        #expect(throws: type, sourceLocation: sourceLocation) {
            do { try body() } catch let error as E {
                caught = error
                throw error
            }
        }
        return caught
    #endif
}

/// The error of type `E` that `body` throws, recorded as #expect(throws:) records it; on
/// the caller's actor, as `body` is.
@discardableResult
package func expectError<E: Error>(
    _ type: E.Type, isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    performing body: () async throws -> Void
) async -> E? {
    #if compiler(>=6.1)
        return await #expect(throws: type, sourceLocation: sourceLocation) { try await body() }
    #else
        var caught: E?
        await #expect(throws: type, sourceLocation: sourceLocation) {
            do { try await body() } catch let error as E {
                caught = error
                throw error
            }
        }
        return caught
    #endif
}
