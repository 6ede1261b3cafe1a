import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that could hang (a peer that never answers, a stream that
    /// never ends): a guard against hanging, never a check of speed. A test's wall time
    /// depends on what runs beside it: one that takes 2 s alone took 127 s in the whole
    /// parallel suite under ThreadSanitizer on a 2-core machine. Ten minutes is far above
    /// any test's slowest run there and still ends a hung CI run in good time.
    package static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
