#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
import CBluejaySystem

/// The thread the stack runs on: ``BluetoothActor``'s executor, and an `epoll` loop over the
/// descriptors transports read (issue 51, after SwiftNIO's event loops that serve as
/// executors).
///
/// A transport's descriptor is watched here, so a batch read from the controller is handed
/// to the stack on the same thread, with no switch: the read, the layers' work and the sends
/// it causes run in one turn. Jobs (the actor's tasks, their timers' continuations) queue
/// here too and run between reads, in order; a job enqueued from another thread wakes the
/// loop through an eventfd only when the loop sleeps in `epoll_wait`.
///
/// Its locks are POSIX mutexes, not `Synchronization.Mutex`: ThreadSanitizer sees those, and
/// every job the stack runs passes through this queue.
public final class EventLoop: SerialExecutor, @unchecked Sendable {
    /// The loop under ``BluetoothActor``, started on first use; it lives as long as the process.
    public static let stack = EventLoop(name: threadName)
    /// The loop thread's name (visible in /proc/PID/task/*/comm, gdb, top -H).
    public static let threadName = "bluejay-loop"

    fileprivate let epoll: Int32
    /// Written to wake a sleeping loop; watched under token 0.
    private let wakeFd: Int32
    /// Guards `jobs`, `sleeping`, `woken`, `watches` and `nextToken`.
    private let lock = ThreadLock()
    private var jobs: [Work] = []
    /// The loop waits in `epoll_wait` with no timeout: an enqueue must wake it.
    private var sleeping = false
    /// The eventfd was written since the loop went to sleep (one write wakes it).
    private var woken = false
    private var watches: [UInt64: Watch] = [:]
    private var nextToken: UInt64 = 1
    /// `pthread_self()` of the loop thread, once it runs.
    private let thread = Atomic<UInt>(0)
    /// Set by every enqueue, cleared when the loop takes the queue: what the loop spins on
    /// before it sleeps, without taking the lock.
    private let hasJobs = Atomic<Bool>(false)
    /// Work for the end of the turn (``whenTurnEnds(_:)``); the loop thread's alone.
    private var turnEnd: [() -> Void] = []
    /// How long the loop looks at `hasJobs` before it sleeps.
    private static let spinNanoseconds: UInt64 = 20_000

    private init(name: String) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        // Without these the stack cannot run at all; there is nothing to fall back to.
        precondition(epoll >= 0 && wakeFd >= 0, "cannot create the stack's event loop: \(errorName(errno))")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        precondition(
            epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFd, &event) == 0,
            "cannot watch the event loop's eventfd: \(errorName(errno))")
        let body = Unmanaged.passRetained(Start(loop: self, name: name)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                pthread_setname_np(pthread_self(), start.name)
                start.loop.run()
                return nil
            }, body)
        precondition(result == 0, "cannot start the stack's event loop thread: \(errorName(result))")
        pthread_detach(handle)
    }

    private final class Start {
        let loop: EventLoop
        let name: String
        init(loop: EventLoop, name: String) { (self.loop, self.name) = (loop, name) }
    }

    /// Whether the caller runs on the loop thread (in a job or a watch's handler).
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread.load(ordering: .acquiring)) != 0 }

    // MARK: Executor

    /// What the loop runs in turn: the actor's jobs, and work handed over from other threads.
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    /// Queues `job` to run on the loop thread, after those queued before it.
    public func enqueue(_ job: consuming ExecutorJob) {
        append(.job(UnownedJob(job)))
    }

    /// Runs `work` on the loop thread, after what was queued before it, with the stack's actor
    /// isolated (``BluetoothActor/assumeIsolated(_:)``): how a transport with a thread of its
    /// own hands over a delivery, in order, with no task (a task's first step would hop
    /// through the cooperative pool and back).
    public func execute(_ work: @escaping @Sendable () -> Void) {
        append(.closure(work))
    }

    private func append(_ work: Work) {
        lock.lock()
        jobs.append(work)
        hasJobs.store(true, ordering: .relaxed)
        let wake = sleeping && !woken
        if wake { woken = true }
        lock.unlock()
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFd, &one, 8)
        }
    }

    /// Runs `work` on the loop thread once the jobs queued so far have run, before the loop
    /// looks at its descriptors again: how a connection writes what a turn's work queued in one
    /// system call. Unlike ``execute(_:)`` it is not a hand-over (the loop does not spin for
    /// more after it). Only on the loop thread.
    public func whenTurnEnds(_ work: @escaping () -> Void) {
        checkIsolated()
        turnEnd.append(work)
    }

    /// Called by `assumeIsolated` and friends when the runtime does not know the current
    /// executor (code running in a watch's handler): isolated exactly when on the loop thread.
    public func checkIsolated() {
        precondition(isCurrent, "not on the stack's event loop thread (\(Self.threadName))")
    }

    // MARK: Watches

    /// What a watched descriptor is ready for, as the last `epoll_wait` said.
    public struct Readiness: OptionSet, Sendable {
        /// The set's bits (``readable`` 1, ``writable`` 2).
        public let rawValue: UInt32
        /// Creates a set from its bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Readable, or hung up or in error (a read then says which).
        public static let readable = Readiness(rawValue: 1)
        /// Writable (only while ``Watch/wantsWritable(_:)`` asked for it).
        public static let writable = Readiness(rawValue: 2)
    }

    /// A descriptor watched for reading; its handler runs on the loop thread while it is
    /// readable (level-triggered: one read per turn is enough, the rest waits for the next),
    /// and, while asked for (``wantsWritable(_:)``), writable.
    public final class Watch: @unchecked Sendable {
        fileprivate let token: UInt64
        fileprivate let fd: Int32
        /// What the watch is for, counted by ``EventLoop/watchCount(named:)``.
        public let name: String
        private unowned let loop: EventLoop
        private let handler: (Watch) -> Void
        /// Held while the handler runs, so a cancel from another thread waits for it.
        private let running = ThreadLock()
        private let cancelled = Atomic<Bool>(false)
        /// Whether the descriptor is watched for writing too (loop thread only).
        private var writable = false
        /// What the descriptor is ready for, in the handler now running (loop thread only).
        public private(set) var readiness: Readiness = []

        fileprivate init(token: UInt64, fd: Int32, name: String, loop: EventLoop, handler: @escaping (Watch) -> Void) {
            self.token = token
            self.fd = fd
            self.name = name
            self.loop = loop
            self.handler = handler
        }

        fileprivate func fire(_ events: UInt32) {
            running.lock()
            defer { running.unlock() }
            guard !cancelled.load(ordering: .acquiring) else { return }
            let hangUp = EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue
            readiness = events & hangUp != 0 ? .readable : []
            if events & EPOLLOUT.rawValue != 0 { readiness.insert(.writable) }
            handler(self)
        }

        /// Watches for writing too (`true`) or no longer (`false`): a socket whose output the
        /// kernel could not take at once, or whose connection is under way. On the loop thread.
        public func wantsWritable(_ on: Bool) {
            guard on != writable, !cancelled.load(ordering: .acquiring) else { return }
            writable = on
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | (on ? EPOLLOUT.rawValue : 0)
            event.data.u64 = token
            _ = epoll_ctl(loop.epoll, EPOLL_CTL_MOD, fd, &event)
        }

        /// Stops watching. No handler runs after it returns, except the one that called it;
        /// the descriptor may then be closed. Idempotent.
        public func cancel() {
            guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            if loop.isCurrent {
                // On the loop thread no other handler runs; this one's caller returns to the loop.
                loop.remove(self)
            } else {
                running.lock()
                loop.remove(self)
                running.unlock()
            }
        }
    }

    /// Watches `fd` for reading: `handler` runs on the loop thread, with the stack's actor
    /// isolated (``BluetoothActor/assumeIsolated(_:)`` may be used), each time the descriptor
    /// is readable or hung up, until the watch is cancelled.
    public func watch(_ fd: Int32, name: String, _ handler: @escaping (Watch) -> Void) throws(WatchError) -> Watch {
        lock.lock()
        let token = nextToken
        nextToken += 1
        let watch = Watch(token: token, fd: fd, name: name, loop: self, handler: handler)
        watches[token] = watch
        lock.unlock()
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = token
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else {
            let code = errno
            lock.withLock { watches[token] = nil }
            throw WatchError(errno: code)
        }
        return watch
    }

    /// Why a descriptor cannot be watched (`epoll_ctl`'s errno: EPERM for a regular file).
    public struct WatchError: Error, Sendable {
        /// The errno `epoll_ctl` set.
        public let errno: Int32
    }

    /// How many watches called `name` are live (the integration tests check that a closed
    /// transport leaves none).
    public func watchCount(named name: String) -> Int {
        lock.withLock { watches.values.count { $0.name == name } }
    }

    fileprivate func remove(_ watch: Watch) {
        lock.withLock { watches[watch.token] = nil }
        var unused = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, watch.fd, &unused)
    }

    // MARK: The loop

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    private func run() {
        thread.store(pthread_self(), ordering: .releasing)
        let executor = asUnownedSerialExecutor()
        var running: [Work] = []
        // Whether the last turn ran work handed over from the queue: then more is likely on
        // its way, and the loop spins a moment before it sleeps. A turn that only read
        // descriptors sleeps at once (the kernel wakes it for the next read).
        var handedOver = false
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            // The jobs queued so far; those they queue run after the next look at the descriptors.
            lock.lock()
            swap(&jobs, &running)
            hasJobs.store(false, ordering: .relaxed)
            lock.unlock()
            handedOver = !running.isEmpty
            for work in running {
                switch work {
                case .job(let job): job.runSynchronously(on: executor)
                case .closure(let closure): closure()
                }
            }
            running.removeAll(keepingCapacity: true)
            while !turnEnd.isEmpty {
                let ending = turnEnd
                turnEnd = []
                for work in ending { work() }
            }

            // What is ready now, without sleeping.
            var count = epoll_wait(epoll, &events, Int32(events.count), 0)
            var waitError = errno
            if count == 0 {
                // Nothing ready: after a hand-over, the next one under a flood is usually
                // microseconds away, so look for it a moment before sleeping (as libdispatch's
                // workers do) rather than pay a sleep and a wake-up, two context switches.
                if handedOver {
                    let deadline = Self.monotonicNanoseconds() + Self.spinNanoseconds
                    var spins = 0
                    while !hasJobs.load(ordering: .relaxed) {
                        spins &+= 1
                        if spins & 255 == 0, Self.monotonicNanoseconds() >= deadline { break }
                    }
                }
                lock.lock()
                let idle = jobs.isEmpty
                sleeping = idle
                lock.unlock()
                if idle {
                    count = epoll_wait(epoll, &events, Int32(events.count), -1)
                    waitError = errno
                    lock.lock()
                    sleeping = false
                    woken = false
                    lock.unlock()
                }
            }
            if count < 0 {
                precondition(waitError == EINTR, "the stack's event loop cannot wait: \(errorName(waitError))")
                continue
            }
            for index in 0..<Int(count) {
                let token = events[index].data.u64
                if token == 0 {
                    var value: UInt64 = 0
                    _ = read(wakeFd, &value, 8)
                    continue
                }
                // A watch cancelled by an earlier handler in this batch is gone already.
                guard let watch = lock.withLock({ watches[token] }) else { continue }
                watch.fire(events[index].events)
            }
        }
    }
}

/// A POSIX mutex, which ThreadSanitizer understands (it does not see `Synchronization.Mutex`
/// on Linux).
final class ThreadLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
