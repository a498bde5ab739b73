/// The trivial work every handler does: add to a counter in a captured final class. The counter
/// is returned as the trial's checksum and summed into a sink that is printed, so the optimizer
/// cannot delete the deliveries.
final class Counter {
    /// Unchecked: every system's handlers add to it, and a dynamic exclusivity check per add
    /// would weigh most on the cheapest (RAW).
    @exclusivity(unchecked) var value = 0
}
