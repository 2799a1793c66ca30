import ArgumentParser
import Foundation
import UploadCore
import UploadProtocols

/// `uploadmon presign s3://bucket/key`: a URL anyone can PUT that object to, for a while.
struct PresignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presign",
        abstract: "Print a presigned PUT URL for an S3 object (SigV4 in the query), valid for --expires.",
        discussion: """
        The credentials, region and endpoint are read as for send --to s3:// (AWS_ACCESS_KEY_ID and \
        AWS_SECRET_ACCESS_KEY, else AWS_PROFILE in ~/.aws; AWS_REGION; AWS_ENDPOINT_URL). Whoever \
        holds the URL can upload that one object until it expires, without the credentials: hand \
        it to a demo's client, or use it here with send FILE --put --to URL.

        Examples:
          uploadmon presign s3://photos/2026/cat.jpg --expires 1h
          curl -T cat.jpg "$(uploadmon presign s3://photos/cat.jpg)"
        """
    )

    @Argument(help: ArgumentHelp("The object: s3://bucket/key.", valueName: "s3-url"))
    var object: String

    @Option(name: .long, help: ArgumentHelp("How long the URL works: 90s, 15m, 1h, 7d at most.", valueName: "duration"))
    var expires = "1h"

    func validate() throws {
        let location: S3Location
        do throws(UploadInputError) { location = try S3Location(parsing: object) } catch { throw ValidationError(error.description) }
        guard !location.key.isEmpty, !location.key.hasSuffix("/") else {
            throw ValidationError("presign needs an object's key, not a prefix: s3://\(location.bucket)/name.jpg")
        }
        do throws(RangeError) {
            _ = try DurationText.parse(expires, option: "--expires", allowed: 1...Double(S3Access.longestPresign))
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        let location = try S3Location(parsing: object)
        let seconds = Int64(try DurationText.parse(expires, option: "--expires", allowed: 1...Double(S3Access.longestPresign)))
        let access: S3Access
        do throws(UploadInputError) {
            access = try S3Access.resolve(environment: ProcessInfo.processInfo.environment) { path in
                FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
            }
        } catch {
            FileHandle.standardError.write(Data("uploadmon presign: \(error.description)\n".utf8))
            throw ExitCode(78)
        }
        print(access.presignedPut(location, expires: seconds, date: Date()))
    }
}
