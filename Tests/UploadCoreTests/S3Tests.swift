import Foundation
import Testing
import UploadCore
import UploadProtocols

/// `s3://` destinations: the location, the credentials and region as the AWS tools read them,
/// the URL each key goes to, and S3's errors in words.
@Suite struct S3Tests {
    @Test func aLocationIsABucketAndAKeyOrPrefix() throws {
        let folder = try S3Location(parsing: "s3://my-photos/2026/trip 1/")
        #expect(folder.bucket == "my-photos" && folder.key == "2026/trip 1/")
        #expect(folder.encodedKey == "2026/trip%201/")
        #expect(try S3Location(parsing: "s3://bucket").key == "")
        #expect(try S3Location(parsing: "s3://bucket/a.jpg").key == "a.jpg")
        for bad in ["s3://ab/", "s3://Upper/", "s3://-dash/", "s3://under_score/", "s3:///key"] {
            #expect(throws: UploadInputError.badS3Bucket(bad)) { try S3Location(parsing: bad) }
        }
        #expect(throws: UploadInputError.unsupportedDestination(url: "ftp://h/x")) { try Destination.validate("ftp://h/x") }
        #expect(throws: Never.self) { try Destination.validate("s3://bucket/") }
        #expect(throws: Never.self) { try Destination.validate("https://h/photo") }
    }

    static let credentialsFile = """
        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key = secretdefault

        [work]
        aws_access_key_id=AKIDWORK
        aws_secret_access_key=secretwork
        aws_session_token = tokenwork
        """
    static let configFile = """
        [default]
        region = eu-west-1

        [profile work]
        region = ap-northeast-1
        s3 =
          addressing_style = path
        # a comment
        [profile minio]
        endpoint_url = http://127.0.0.1:9000/
        aws_access_key_id = AKIDMINIO
        aws_secret_access_key = secretminio
        """

    static func resolve(_ environment: [String: String]) throws(UploadInputError) -> S3Access {
        try S3Access.resolve(environment: ["HOME": "/home/u"].merging(environment) { $1 }) { path in
            switch path {
            case "/home/u/.aws/credentials": credentialsFile
            case "/home/u/.aws/config": configFile
            default: nil
            }
        }
    }

    @Test func theEnvironmentWinsThenTheProfile() throws {
        let fromEnvironment = try Self.resolve(["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "secretenv", "AWS_PROFILE": "work"])
        #expect(fromEnvironment.credentials == AWSCredentials(accessKeyID: "AKIDENV", secretAccessKey: "secretenv"))
        #expect(fromEnvironment.region == "ap-northeast-1" && fromEnvironment.pathStyle)

        let byDefault = try Self.resolve([:])
        #expect(byDefault.credentials == AWSCredentials(accessKeyID: "AKIDDEFAULT", secretAccessKey: "secretdefault"))
        #expect(byDefault.region == "eu-west-1" && !byDefault.pathStyle && byDefault.endpointURL == nil)

        let work = try Self.resolve(["AWS_PROFILE": "work", "AWS_REGION": "us-west-2"])
        #expect(work.credentials == AWSCredentials(accessKeyID: "AKIDWORK", secretAccessKey: "secretwork", sessionToken: "tokenwork"))
        #expect(work.region == "us-west-2")

        let minio = try Self.resolve(["AWS_PROFILE": "minio"])
        #expect(minio.credentials.accessKeyID == "AKIDMINIO" && minio.endpointURL == "http://127.0.0.1:9000" && minio.pathStyle)
        #expect(minio.region == "us-east-1")
        let overridden = try Self.resolve(["AWS_PROFILE": "minio", "AWS_ENDPOINT_URL_S3": "https://s3.example.net", "AWS_ENDPOINT_URL": "https://other"])
        #expect(overridden.endpointURL == "https://s3.example.net")
    }

    @Test func noCredentialsSaysWhereTheyWereLookedFor() {
        #expect(throws: UploadInputError.noAWSCredentials(profile: "nobody", files: ["/home/u/.aws/credentials", "/home/u/.aws/config"])) {
            try Self.resolve(["AWS_PROFILE": "nobody"])
        }
        let error = UploadInputError.noAWSCredentials(profile: "default", files: ["a", "b"])
        #expect(error.description.contains("AWS_ACCESS_KEY_ID") && error.description.contains("a or b"))
    }

    @Test func eachKeyGoesToItsBucketsURL() throws {
        let key = AWSCredentials(accessKeyID: "k", secretAccessKey: "s")
        let location = try S3Location(parsing: "s3://photos/2026/a b.jpg")
        #expect(S3Access(credentials: key, region: "eu-west-1").url(for: location) == "https://photos.s3.eu-west-1.amazonaws.com/2026/a%20b.jpg")
        #expect(
            S3Access(credentials: key, region: "eu-west-1", pathStyle: true).url(for: location)
                == "https://s3.eu-west-1.amazonaws.com/photos/2026/a%20b.jpg")
        #expect(
            S3Access(credentials: key, region: "eu-west-1").url(for: try S3Location(parsing: "s3://my.photos/x/"))
                == "https://s3.eu-west-1.amazonaws.com/my.photos/x/")
        #expect(
            S3Access(credentials: key, region: "auto", endpointURL: "http://127.0.0.1:9000", pathStyle: true).url(for: try S3Location(parsing: "s3://bkt"))
                == "http://127.0.0.1:9000/bkt/")
    }

    @Test func s3sErrorsAreSaidByCodeAndMessageWithWhatToDo() {
        func answer(_ status: Int, _ body: String, _ headers: [(String, String)] = []) -> UploadResponse {
            UploadResponse(status: status, reason: "", headers: headers, body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count))
        }
        #expect(
            S3Access.explained(answer(404, "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>"))
                == "S3 404 NoSuchBucket: The specified bucket does not exist")
        #expect(
            S3Access.explained(
                answer(
                    301, "<Error><Code>PermanentRedirect</Code><Message>Use the right endpoint</Message></Error>",
                    [("x-amz-bucket-region", "eu-central-1")]))?.hasSuffix("(the bucket is in eu-central-1: AWS_REGION=eu-central-1)") == true)
        #expect(S3Access.explained(answer(403, "<Error><Code>SignatureDoesNotMatch</Code></Error>"))?.contains("AWS_SECRET_ACCESS_KEY") == true)
        #expect(S3Access.explained(answer(200, "<Error><Code>X</Code></Error>")) == nil)
        #expect(S3Access.explained(answer(500, "plain text")) == nil)
    }
}

@Suite struct S3SingleRequestTests {
    @Test func whatOnePutCannotCarryIsRefusedWithTheReason() {
        #expect(PutUploadMachine.s3Refusal(size: 1) == nil)
        #expect(PutUploadMachine.s3Refusal(size: 5 << 40) == nil)
        #expect(PutUploadMachine.s3Refusal(size: (5 << 40) + 1)?.hasPrefix("S3 takes at most 5 TiB in one object") == true)
        #expect(PutUploadMachine.s3Refusal(size: nil)?.contains("save it to a file first") == true)
    }
}

/// Presigned URLs: AWS's own example (S3's documentation, "Authenticating Requests: Using
/// Query Parameters"), signature for signature.
@Suite struct PresignTests {
    @Test func awsDocumentedExample() throws {
        let access = S3Access(
            credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let date = try #require(ISO8601DateFormatter().date(from: "2013-05-24T00:00:00Z"))
        let url = access.presigned(method: "GET", try Endpoint(parsing: "https://examplebucket.s3.amazonaws.com/test.txt"), expires: 86400, date: date)
        #expect(
            url == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
                + "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }
}
