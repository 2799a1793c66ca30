import Dispatch
import Foundation
import Monitor
import MonitorRuntime
import NIOConcurrencyHelpers
import PhotoRewrite
import PreviewModel
import Testing
import UploadCore
import UploadTesting

/// The photo under the cursor written off the loop, as the next upload would write it, for the
/// preview to tell its exact size.
@Suite struct ConversionMeasurerTests {
    /// Requests that follow one another faster than the cursor settles write only the last.
    @Test func onlyThePhotoTheCursorStopsOnIsWritten() async throws {
        let measured = NIOLockedValueBox<[String]>([])
        let delivered = NIOLockedValueBox<[(String, ConversionMeasure.Found?)]>([])
        let worker = ConversionMeasurer(
            settle: 0.2,
            measure: { request in
                measured.withLockedValue { $0.append(request.path) }
                return .bytes(Int64(request.path.count))
            }
        ) { request, bytes in delivered.withLockedValue { $0.append((request.path, bytes)) } }
        let jpeg = PhotoConversion(format: .jpeg)
        for name in ["a.heic", "bb.heic", "ccc.heic"] {
            worker.request(ConversionMeasure(path: "/p/" + name, size: 1, conversion: jpeg, stripLocation: false))
        }
        #expect(try await eventually { delivered.withLockedValue { $0.count } == 1 })
        #expect(measured.withLockedValue { $0 } == ["/p/ccc.heic"])
        #expect(delivered.withLockedValue { $0.first?.1 } == .bytes(Int64("/p/ccc.heic".count)))
        // The worker is idle again: the next request is written too.
        worker.request(ConversionMeasure(path: "/p/d.heic", size: 1, conversion: jpeg, stripLocation: false))
        #expect(try await eventually { delivered.withLockedValue { $0.count } == 2 })
    }

    /// A photo whose read never returns is answered "took longer" and the next one is still
    /// written: the stuck read keeps its own thread.
    @Test func aStuckReadDoesNotStopTheNextPhoto() async throws {
        let never = DispatchSemaphore(value: 0)
        defer { never.signal() }
        let delivered = NIOLockedValueBox<[(String, ConversionMeasure.Found?)]>([])
        let worker = ConversionMeasurer(
            settle: 0.01, limit: 0.3,
            measure: { request in
                if request.path.hasSuffix("stuck.heic") { never.wait() }
                return .bytes(7)
            }
        ) { request, found in delivered.withLockedValue { $0.append((request.path, found)) } }
        let jpeg = PhotoConversion(format: .jpeg)
        worker.request(ConversionMeasure(path: "/nfs/stuck.heic", size: 1, conversion: jpeg, stripLocation: false))
        #expect(try await eventually { delivered.withLockedValue { $0.count } == 1 })
        guard case .refused(let why)? = delivered.withLockedValue({ $0.first?.1 }) else {
            Issue.record("the stuck photo is answered")
            return
        }
        #expect(why.hasPrefix("writing it took longer than"))
        worker.request(ConversionMeasure(path: "/nfs/next.heic", size: 1, conversion: jpeg, stripLocation: false))
        #expect(try await eventually { delivered.withLockedValue { $0.count } == 2 })
        #expect(delivered.withLockedValue { $0.last?.1 } == .bytes(7))
    }

    /// The usual measure is the converter's own output; a photo that goes as it is, its size.
    @Test func theSizeIsWhatTheConverterWrites() throws {
        let folder = TestFiles.makeTemporaryDirectory("measure")
        let path = folder + "/shot.png"
        var rgb = [UInt8](repeating: 0, count: 400 * 300 * 3)
        for i in rgb.indices { rgb[i] = UInt8(truncatingIfNeeded: i &* 31 >> 4) }
        try PictureWriter.png(RGBImage(width: 400, height: 300, rgb: rgb), to: path)
        let size = Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0)
        let asJPEG = ConversionMeasure(path: path, size: size, conversion: PhotoConversion(format: .jpeg, maxDimension: 200), stripLocation: false)
        let converted = try #require(try PhotoConverter.convert(path: path, asJPEG.conversion, stripLocation: false))
        #expect(ConversionMeasurer.writeFile(asJPEG) == .bytes(Int64(converted.bytes.count)) && Int64(converted.bytes.count) != size)
        // What the file's header could not tell is said: an animated GIF's frames.
        let frame = GIFWriter.Frame(width: 8, height: 8, indexes: [UInt8](repeating: 0, count: 64))
        let gif = folder + "/anim.gif"
        try Data(GIFWriter.gif(width: 8, height: 8, palette: [(9, 9, 9)], frames: [frame, frame])).write(to: URL(fileURLWithPath: gif))
        #expect(
            ConversionMeasurer.writeFile(ConversionMeasure(path: gif, size: 9, conversion: asJPEG.conversion, stripLocation: false))
                == .refused("an animated GIF (2 frames) is not converted: only its first frame would arrive"))
    }
}
