// dudect's measurement: inputs of two classes made beforehand and interleaved in random
// order, each operation timed alone by the cycle counter.
import CycleCounter

/// The two classes of dudect's fixed-against-random test: the same operation on a fixed
/// secret or on a fresh random one, every public input drawn from one distribution for both.
enum InputClass: UInt8 {
    /// The fixed secret.
    case fixed = 0
    /// A random secret, new for each measurement.
    case random = 1
}

/// Times `operation` on `count` inputs, each made by `makeInput` for a class drawn at random,
/// and returns each one's counter ticks with its class.
///
/// Everything but the operation happens outside the timed region: the classes and inputs are
/// made first (a fixed secret is a fresh copy each time, so both classes read inputs laid out
/// alike in memory, none warmer in the cache than the other), the result is stored (so the
/// optimiser cannot drop the work) and checked afterwards. A warm-up round goes first, so the
/// first measurements do not pay for page faults and cold caches.
func measure<Input, Output: Equatable>(
    count: Int, makeInput: (InputClass, inout SystemRandomNumberGenerator) -> Input, operation: (Input) -> Output
) -> (ticks: [UInt64], classes: [UInt8]) {
    var generator = SystemRandomNumberGenerator()
    let classes = (0..<count).map { _ in UInt8.random(in: 0...1, using: &generator) }
    let inputs = classes.map { makeInput(InputClass(rawValue: $0)!, &generator) }
    var outputs = [Output?](repeating: nil, count: count)
    var ticks = [UInt64](repeating: 0, count: count)

    let warmUp = min(count, max(10, count / 100))
    for index in 0..<warmUp { outputs[index] = operation(inputs[index]) }

    inputs.withUnsafeBufferPointer { inputs in
        outputs.withUnsafeMutableBufferPointer { outputs in
            ticks.withUnsafeMutableBufferPointer { ticks in
                for index in 0..<count {
                    let start = ct_counter_start()
                    outputs[index] = operation(inputs[index])
                    let stop = ct_counter_stop()
                    ticks[index] = stop &- start
                }
            }
        }
    }

    // The operation did run, and on the input it was given: a sample of results again.
    for index in stride(from: 0, to: count, by: max(1, count / 32)) {
        precondition(outputs[index] == operation(inputs[index]), "bluejay-ct: measurement \(index) gave a wrong result")
    }
    return (ticks, classes)
}
