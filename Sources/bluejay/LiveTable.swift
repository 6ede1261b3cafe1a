#if canImport(Glibc)
    import Glibc
#endif

/// Rows that are redrawn in place on a terminal, one per key, in the order the keys were
/// first seen: `update` returns the text that brings the screen up to date (cursor up
/// over the rows drawn so far, then every row again, each line cleared first), or nil
/// when nothing changed. Rows are cut to the terminal's width, since a wrapped line would
/// throw the cursor-up count off. Only plain ANSI sequences are used, so an interrupted
/// run leaves the terminal as it was.
struct LiveTable<Key: Hashable> {
    private var keys: [Key] = []
    private var rows: [Key: String] = [:]
    /// Lines on the screen that belong to the table (the cursor is just below them).
    private var drawnLines = 0
    /// The terminal's width in columns; nil: unknown, rows are not cut.
    var width: Int?

    init(width: Int? = LiveTable.terminalWidth()) { self.width = width }

    /// Sets `key`'s row; the text to write to the terminal, or nil if the row is unchanged.
    mutating func update(_ key: Key, _ row: String) -> String? {
        if rows[key] == row { return nil }
        if rows.updateValue(row, forKey: key) == nil { keys.append(key) }
        // Back to the first row (column 0), then every row, each on a cleared line.
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A\r" : "\r"
        for key in keys { text += "\u{1B}[2K" + Self.fit(rows[key] ?? "", width: width) + "\n" }
        drawnLines = keys.count
        return text
    }

    /// The rows, in order (for tests and the final state).
    var lines: [String] { keys.map { rows[$0] ?? "" } }

    /// `line` cut to `width` columns, ending in "…" when cut (one column per character:
    /// double-width characters are not accounted for).
    static func fit(_ line: String, width: Int?) -> String {
        guard let width, width > 1, line.count > width else { return line }
        return String(line.prefix(width - 1)) + "…"
    }

    /// Columns of the terminal on standard output, or nil if it does not say.
    static func terminalWidth() -> Int? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
