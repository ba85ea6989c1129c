import Foundation

/// The `TimeStampData` of FDC1: a UTC day of the year and second of the day, without a year.
public struct DOSIPASTimeStamp: Sendable, Hashable {
    /// `day`: 1 = 1 January.
    public var dayOfYear: Int
    /// `time`: seconds after midnight UTC.
    public var secondOfDay: Int

    /// The instant: the latest one with this day of the year and second of the day that is not after `limit`.
    ///
    /// The year is not encoded, and a barcode is never generated in the future: pass the inspection time plus
    /// the clock-skew tolerance. A barcode stamped later in the year than that (a day in November read in
    /// February) is last year's, and therefore old, never next year's. Day 366 exists only in leap years: it is
    /// the 31 December of the latest leap year not after `limit`. Nearest-year rules (the UIC's reference code,
    /// farecheck before) turn a stale barcode into one generated in the future.
    public func date(notAfter limit: Date) -> Date {
        let limitSeconds = Int(limit.timeIntervalSince1970.rounded(.down))
        let year = UICTime.civil(fromDays: limitSeconds.floorDivided(by: 86_400)).year
        // A leap year comes at least every 8 years (1896 to 1904, 2096 to 2104), so day 366 is found in 9.
        for candidate in stride(from: year, through: year - 8, by: -1) where dayOfYear <= Self.days(in: candidate) {
            let seconds = FCBDay(year: candidate, dayOfYear: dayOfYear).epochDay &* 86_400 &+ secondOfDay
            if seconds <= limitSeconds { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
        }
        // Unreachable for the schema's ranges (day 1...366, second 0...86399); the earliest reading otherwise.
        let seconds = FCBDay(year: year - 8, dayOfYear: dayOfYear).epochDay &* 86_400 &+ secondOfDay
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// 366 in a leap year of the Gregorian calendar, else 365.
    static func days(in year: Int) -> Int {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 366 : 365
    }
}

/// `UicDynamicContentData` (FDC1): what the phone adds at display time, signed at level 2.
public struct UICDynamicContent: Sendable {
    /// `dynamicContentMobileAppId`: the app instance that shows the ticket.
    public var mobileAppID: String?
    /// `dynamicContentTimeStamp`: when the barcode was generated (UTC).
    public var timeStamp: DOSIPASTimeStamp?
    /// `dynamicContentGeoCoordinate`: longitude and latitude in the stated unit (east and north positive).
    public var geoCoordinate: (longitude: Int, latitude: Int, unit: String)?
    /// `dynamicContentResponseToChallenge`: ids and data of the responses.
    public var challengeResponses: [(id: String, data: [UInt8])]
    /// `dynamicContentExtension`'s id.
    public var extensionID: String?

    /// Decodes FDC1 octets.
    ///
    /// - Throws: `malformed` naming the bit offset and field.
    public init(decoding bytes: [UInt8]) throws(FormatError) {
        let value = try PERDecoder.decode(
            bytes, as: DOSIPASSchema.uicDynamicContentData, subject: "the FDC1 dynamic content")
        guard let record = value.record else { throw .malformed("the FDC1 dynamic content is not a sequence") }
        mobileAppID = record["dynamicContentMobileAppId"]?.text
        if let stamp = record["dynamicContentTimeStamp"]?.record, let day = stamp["day"]?.integer,
            let time = stamp["time"]?.integer
        {
            timeStamp = DOSIPASTimeStamp(dayOfYear: day, secondOfDay: time)
        }
        if let geo = record["dynamicContentGeoCoordinate"]?.record, let longitude = geo["longitude"]?.integer,
            let latitude = geo["latitude"]?.integer
        {
            let units = ["microDegree", "tenthmilliDegree", "milliDegree", "centiDegree", "deciDegree"]
            let unitIndex = geo["geoUnit"]?.enumeratedIndex ?? 2
            let west = geo["hemisphereLongitude"]?.enumeratedIndex == 1
            let south = geo["hemisphereLatitude"]?.enumeratedIndex == 1
            geoCoordinate = (
                west ? 0 &- longitude : longitude, south ? 0 &- latitude : latitude,
                unitIndex < units.count ? units[unitIndex] : "unit \(unitIndex)"
            )
        }
        challengeResponses = (record["dynamicContentResponseToChallenge"]?.items ?? []).compactMap(\.record).map {
            ($0["extensionId"]?.text ?? "", $0["extensionData"]?.octets ?? [])
        }
        extensionID = record["dynamicContentExtension"]?.record?["extensionId"]?.text
    }
}

/// `IntercodeDynamicData` (level-2 data `_RRRR.ID1`): the French dynamic content, relative to the issuing day.
public struct IntercodeDynamicData: Sendable, Hashable {
    /// `dynamicContentDay`: days after the FCB issuing date (default 0).
    public var day: Int
    /// `dynamicContentTime`: seconds after local midnight.
    public var secondOfDay: Int?
    /// `dynamicContentUTCOffset` in quarter hours, FCB's sign: UTC = local + offset × 15 min.
    public var utcOffset: Int?
    /// `dynamicContentDuration`: seconds the barcode is valid after its generation.
    public var duration: Int?

    /// Decodes `_RRRR.ID1` octets.
    ///
    /// - Throws: `malformed` naming the bit offset and field.
    public init(decoding bytes: [UInt8]) throws(FormatError) {
        let value = try PERDecoder.decode(
            bytes, as: DOSIPASSchema.intercodeDynamicData, subject: "the Intercode dynamic data")
        guard let record = value.record else { throw .malformed("the Intercode dynamic data is not a sequence") }
        day = record["dynamicContentDay"]?.integer ?? 0
        secondOfDay = record["dynamicContentTime"]?.integer
        utcOffset = record["dynamicContentUTCOffset"]?.integer
        duration = record["dynamicContentDuration"]?.integer
    }

    /// When the barcode was generated, counted from the FCB issuing day (`nil` without a time); without an
    /// offset the time is local, read as Europe/Paris (the same rules as Europe/Berlin, which `FCBInstant` uses).
    public func generatedAt(issuingDay: FCBDay) -> Date? {
        guard let secondOfDay else { return nil }
        return FCBInstant(
            day: issuingDay.adding(days: day), minute: secondOfDay / 60, second: secondOfDay % 60, utcOffset: utcOffset
        ).date
    }
}

/// The dynamic content of a barcode's level-2 data, by format.
public enum DOSIPASDynamicContent: Sendable {
    /// `FDC1`.
    case fdc1(UICDynamicContent)
    /// Intercode `_RRRR.ID1`.
    case intercode(IntercodeDynamicData)

    /// Decodes `block` by its format; `nil` for a format farecheck does not read (checked by level 2 all the
    /// same, but its content is not used).
    ///
    /// - Throws: `malformed` when the block's format is known and its bits break it.
    public init?(_ block: DOSIPASDataBlock) throws(FormatError) {
        switch block.format {
        case .fdc1: self = .fdc1(try UICDynamicContent(decoding: block.data))
        case .intercodeDynamic: self = .intercode(try IntercodeDynamicData(decoding: block.data))
        case .fcb, .other: return nil
        }
    }
}

/// When a dynamic barcode was generated and how long it may be shown, from its level-2 data and header.
public struct DOSIPASFreshness: Sendable, Hashable {
    /// The generation time (FDC1 time stamp, or Intercode day and time).
    public var generatedAt: Date
    /// Seconds after `generatedAt` the barcode may be shown (Intercode `dynamicContentDuration`, else the
    /// header's `validityDuration`); `nil` when neither states one.
    public var duration: Int?
    /// The header's `endOfValidity`: after it the barcode must be regenerated.
    public var endOfValidity: Date?
}

extension DOSIPASBarcode {
    /// The decoded level-2 data, when it is in a format farecheck reads.
    ///
    /// - Throws: `malformed` when its bits break its format.
    public func dynamicContent() throws(FormatError) -> DOSIPASDynamicContent? {
        guard let level2Data else { return nil }
        return try DOSIPASDynamicContent(level2Data)
    }

    /// The generation time and allowed age of the barcode, `nil` when the level-2 data states no time.
    ///
    /// - Parameters:
    ///   - limit: the latest instant the barcode can have been generated (the inspection time plus the clock-skew
    ///     tolerance), which fixes the year of an FDC1 time stamp (`DOSIPASTimeStamp.date(notAfter:)`).
    ///   - issuingDay: the FCB issuing day, the base of Intercode's day count.
    /// - Throws: `malformed` when the level-2 data's bits break its format.
    public func freshness(notAfter limit: Date, issuingDay: FCBDay?) throws(FormatError) -> DOSIPASFreshness? {
        freshness(of: try dynamicContent(), notAfter: limit, issuingDay: issuingDay)
    }

    /// The generation time and allowed age from level-2 content already decoded.
    func freshness(
        of content: DOSIPASDynamicContent?, notAfter limit: Date, issuingDay: FCBDay?
    ) -> DOSIPASFreshness? {
        let generatedAt: Date
        var duration = level1.validityDuration
        switch content {
        case .fdc1(let content)?:
            guard let stamp = content.timeStamp else { return nil }
            generatedAt = stamp.date(notAfter: limit)
        case .intercode(let data)?:
            guard let issuingDay, let date = data.generatedAt(issuingDay: issuingDay) else { return nil }
            generatedAt = date
            // Intercode's own duration is the more specific one (as dosipas-ts reads it).
            if let own = data.duration { duration = own }
        case nil:
            return nil
        }
        return DOSIPASFreshness(generatedAt: generatedAt, duration: duration, endOfValidity: level1.endOfValidity)
    }
}

extension Int {
    /// Division rounding towards minus infinity (days before 1970 stay on their day).
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
