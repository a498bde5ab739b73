/// W12's person on the floor engine: six variables, and fullName and address as computed
/// properties (as Herald's `HeraldPerson`).
final class FloorPerson: W12Fields {
    /// Counts the calls of the two functions.
    let calls: Counter
    /// The storage of `first`.
    let firstVariable = FloorVariable(0)
    /// The storage of `last`.
    let lastVariable = FloorVariable(0)
    /// The storage of `street`.
    let streetVariable = FloorVariable(0)
    /// The storage of `city`.
    let cityVariable = FloorVariable(0)
    /// The storage of `state`.
    let stateVariable = FloorVariable(0)
    /// The storage of `zip`.
    let zipVariable = FloorVariable(0)
    /// fullName ← first, last.
    let fullNameProperty = FloorComputed<FloorPerson, Int> { person in
        W12.fullName(person.first, person.last, person.calls)
    }
    /// address ← fullName, street, city, state, zip.
    let addressProperty = FloorComputed<FloorPerson, Int> { person in
        W12.address(
            person.fullName, (person.street, person.city, person.state, person.zip), person.calls)
    }

    /// A person whose functions count their calls in `calls`.
    init(calls: Counter) {
        self.calls = calls
        fullNameProperty.bind(to: self)
        addressProperty.bind(to: self)
    }

    /// The first name (a variable).
    var first: Int {
        get { firstVariable.value }
        set { firstVariable.value = newValue }
    }
    /// The last name (a variable).
    var last: Int {
        get { lastVariable.value }
        set { lastVariable.value = newValue }
    }
    /// The street (a variable).
    var street: Int {
        get { streetVariable.value }
        set { streetVariable.value = newValue }
    }
    /// The city (a variable).
    var city: Int {
        get { cityVariable.value }
        set { cityVariable.value = newValue }
    }
    /// The state (a variable).
    var state: Int {
        get { stateVariable.value }
        set { stateVariable.value = newValue }
    }
    /// The zip code (a variable).
    var zip: Int {
        get { zipVariable.value }
        set { zipVariable.value = newValue }
    }
    /// The full name (computed).
    var fullName: Int { fullNameProperty.value }
    /// The address (computed).
    var address: Int { addressProperty.value }
}
