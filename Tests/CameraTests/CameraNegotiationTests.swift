import Camera
import DeviceSettings
import Testing

/// A camera is opened in the mode that serves decoding best among those its driver offers.
@Suite struct CameraNegotiationTests {
    static func mode(_ format: PixelFormat, _ width: Int, _ height: Int, _ rate: Double = 30) -> CameraMode {
        CameraMode(pixelFormat: format, width: width, height: height, framesPerSecond: rate)
    }

    @Test func fourCharacterCodesReadAsV4L2WritesThem() {
        // v4l2_fourcc('Y', 'U', '1', '2'): the first character in the lowest byte.
        #expect(PixelFormat.yuv420.code == 0x3231_5559)
        #expect(PixelFormat(code: 0x5945_5247) == .grey)
        #expect(PixelFormat.mjpeg.description == "MJPG")
        #expect(PixelFormat(code: 0x0102_0304).description == "0x1020304")
        #expect(PixelFormat(fourCC: "YU1") == nil)
        #expect(PixelFormat(fourCC: "YU\u{7}2") == nil)
    }

    @Test func exactRequestIsTaken() {
        let offered = [Self.mode(.yuv420, 640, 480), Self.mode(.yuv420, 1280, 720), Self.mode(.yuv420, 1920, 1080)]
        #expect(CameraNegotiation.choose(CameraRequest(), from: offered) == Self.mode(.yuv420, 1280, 720))
    }

    @Test func luminancePlaneFormatsComeBeforeOnesNeedingConversion() {
        // A webcam's own MJPG and YUYV, and the YU12 that libv4l2 converts them to.
        let offered = [Self.mode(.mjpeg, 1280, 720), Self.mode(.yuyv, 1280, 720), Self.mode(.yuv420, 1280, 720)]
        #expect(CameraNegotiation.choose(CameraRequest(), from: offered)?.pixelFormat == .yuv420)
        // Even at a size less fitting: decoding in place matters more than the last pixels.
        let only = [Self.mode(.mjpeg, 1280, 720), Self.mode(.grey, 1920, 1080)]
        #expect(CameraNegotiation.choose(CameraRequest(), from: only)?.pixelFormat == .grey)
    }

    @Test func requiredFormatIsTakenOrNothing() {
        let offered = [Self.mode(.yuv420, 1280, 720), Self.mode(.yuyv, 1280, 720), Self.mode(.mjpeg, 1280, 720)]
        #expect(CameraNegotiation.choose(CameraRequest(pixelFormat: .yuyv), from: offered)?.pixelFormat == .yuyv)
        // A compressed format is never read by farecheck itself, even when asked for: libv4l2 offers it as YU12.
        #expect(CameraNegotiation.choose(CameraRequest(pixelFormat: .mjpeg), from: offered) == nil)
        #expect(CameraNegotiation.choose(CameraRequest(), from: [Self.mode(.mjpeg, 1280, 720)]) == nil)
        #expect(CameraNegotiation.choose(CameraRequest(pixelFormat: .nv12), from: offered) == nil)
        #expect(CameraNegotiation.choose(CameraRequest(), from: []) == nil)
    }

    @Test func sizeIsTheSmallestThatCoversTheRequestElseTheLargest() {
        let offered = [Self.mode(.yuv420, 640, 480), Self.mode(.yuv420, 2592, 1944), Self.mode(.yuv420, 1920, 1080)]
        #expect(CameraNegotiation.choose(CameraRequest(), from: offered)?.width == 1920)
        let small = [Self.mode(.yuv420, 320, 240), Self.mode(.yuv420, 640, 480)]
        #expect(CameraNegotiation.choose(CameraRequest(), from: small)?.width == 640)
    }

    @Test func frameRateIsTheRequestedElseTheSlowestAboveElseTheFastest() {
        let rates = { (values: [Double]) in values.map { Self.mode(.yuv420, 1280, 720, $0) } }
        #expect(CameraNegotiation.choose(CameraRequest(), from: rates([15, 30, 60]))?.framesPerSecond == 30)
        #expect(CameraNegotiation.choose(CameraRequest(), from: rates([15, 60, 90]))?.framesPerSecond == 60)
        #expect(CameraNegotiation.choose(CameraRequest(), from: rates([5, 15]))?.framesPerSecond == 15)
    }

    @Test func modesADriverShouldNotReportAreIgnored() {
        let offered = [Self.mode(.yuv420, 0, 720), Self.mode(.yuv420, 1280, 720, 0), Self.mode(.yuv420, 640, 480)]
        #expect(CameraNegotiation.choose(CameraRequest(), from: offered) == Self.mode(.yuv420, 640, 480))
    }
}
