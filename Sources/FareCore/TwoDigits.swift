extension Int {
    /// The number with at least two digits (`07` for 7): days, months, hours and minutes as tickets and ISO 8601
    /// write them.
    public var twoDigits: String { self < 10 ? "0\(self)" : "\(self)" }
}
