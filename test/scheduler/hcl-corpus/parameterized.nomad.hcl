# A parameterized (dispatchable) batch job: payload, required and optional
# meta keys, and the task's dispatch_payload file.
job "video-encode" {
  type        = "batch"
  datacenters = ["dc1"]

  parameterized {
    payload       = "required"
    meta_required = ["input_url"]
    meta_optional = ["preset", "priority"]
  }

  group "encode" {
    task "ffmpeg" {
      driver = "docker"

      dispatch_payload {
        file = "input/job.json"
      }

      config {
        image = "jrottenberg/ffmpeg:6.1-ubuntu"
        args  = ["-i", "${NOMAD_META_input_url}", "-preset", "${NOMAD_META_preset}", "local/out.mp4"]
      }
    }
  }
}
