import Foundation
import Testing
import UploadCore
import UploadProtocols
import UploadTesting

/// A presigned PUT URL is what botocore (the AWS SDK for Python) makes for the same object,
/// credentials and moment, signature for signature.
@Suite(.enabled(if: S3Peer.available, "needs python3 with boto3 (.ci/run installs it)"))
struct PresignBotocoreTests {
    @Test(
        arguments: [("photos", "2026/a b+c.jpg", "eu-west-1", nil), ("my-bucket", "x.jpg", "us-east-1", "FwoGZXIvYXdzEtoken")]
            as [(String, String, String, String?)])
    func theSignatureIsBotocores(bucket: String, key: String, region: String, token: String?) async throws {
        let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sessionToken: token)
        let access = S3Access(credentials: credentials, region: region)
        let date = Date(timeIntervalSince1970: 1_795_000_000)
        let ours = access.presignedPut(try S3Location(parsing: "s3://\(bucket)/\(key)"), expires: 3600, date: date)
        let script = """
            import datetime, sys, botocore.auth, botocore.credentials, botocore.awsrequest
            botocore.auth.get_current_datetime = lambda *a, **k: datetime.datetime.fromtimestamp(1795000000, datetime.timezone.utc).replace(tzinfo=None)
            creds = botocore.credentials.Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sys.argv[3] or None)
            request = botocore.awsrequest.AWSRequest(method="PUT", url=sys.argv[1])
            botocore.auth.S3SigV4QueryAuth(creds, "s3", sys.argv[2], expires=3600).add_auth(request)
            print(request.url)
            """
        let url = access.url(for: try S3Location(parsing: "s3://\(bucket)/\(key)"))
        // Off the cooperative pool: botocore's first import may take a while on a fresh machine.
        let run = try await offPool { try PythonDigests.run(["-c", script, url, region, token ?? ""]) }
        #expect(run.status == 0, "\(run.output)")
        func signature(_ text: String) -> String? {
            text.split(separator: "&").first { $0.hasPrefix("X-Amz-Signature=") }.map { String($0.dropFirst(16)) }
        }
        let theirs = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signature(ours) != nil && signature(ours) == signature(theirs), "\(ours)\n\(theirs)")
    }
}
