package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// chatJob: one docker task "app" with a template written into its local dir.
func chatJob() *nomad.Job {
	task := nomad.NewTask("app", "docker").SetConfig("image", "chat:1").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.Templates = []*nomad.Template{{DestPath: ptr("local/app.env"), EmbeddedTmpl: ptr("MODE=test\n")}}
	group := nomad.NewTaskGroup("chat", 1).AddTask(task)
	return nomad.NewServiceJob("chat", "chat", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
}

// collect reads log frames until their data holds want (or the stream ends, or a generous real bound passes).
func collect(frames <-chan *nomad.StreamFrame, errs <-chan error, seen *strings.Builder, want string) error {
	deadline := time.After(30 * time.Second)
	for !strings.Contains(seen.String(), want) {
		select {
		case frame, ok := <-frames:
			if !ok {
				return fmt.Errorf("log stream ended before %q (got %q)", want, seen.String())
			}
			if frame.File != "alloc/logs/app.stdout.0" {
				return fmt.Errorf("frame from %q", frame.File)
			}
			seen.Write(frame.Data)
			if frame.Offset != int64(seen.Len()) {
				return fmt.Errorf("frame offset %d after %d bytes", frame.Offset, seen.Len())
			}
		case err := <-errs:
			return err
		case <-deadline:
			return fmt.Errorf("no %q after 30 s (got %q)", want, seen.String())
		}
	}
	return nil
}

func nomadFSChecks(control Control) []Check {
	c := nomadClient()
	var alloc *nomad.Allocation
	running := func() error {
		if alloc != nil {
			return nil
		}
		// What the task writes: a line on start, one 10 s and one 20 s later (virtual time).
		script := map[string]interface{}{
			"do": "task-output", "job": "chat", "task": "app",
			"stdout": []interface{}{"starting", map[string]string{"after": "10s", "line": "ready"}, map[string]string{"after": "20s", "line": "serving"}},
		}
		if _, err := control.Post("/_standin/actions", script); err != nil {
			return err
		}
		var err error
		alloc, err = runningAlloc(c, control, chatJob())
		return err
	}
	return []Check{
		{"nomad-fs/list-stat-and-cat", func() error {
			if err := running(); err != nil {
				return err
			}
			fs := c.AllocFS()
			root, _, err := fs.List(alloc, "/", nil)
			if err != nil {
				return err
			}
			names := []string{}
			for _, f := range root {
				names = append(names, f.Name)
			}
			if err := Expect(strings.Join(names, ",") == "alloc,app" && root[0].IsDir && root[0].FileMode == "drwxrwxrwx", "root: %v", names); err != nil {
				return err
			}
			logs, _, err := fs.List(alloc, "alloc/logs", nil)
			if err != nil {
				return err
			}
			if err := Expect(len(logs) == 2 && logs[1].Name == "app.stdout.0" && logs[1].Size == int64(len("starting\n")) && !logs[1].ModTime.IsZero(), "alloc/logs: %+v", logs); err != nil {
				return err
			}
			info, _, err := fs.Stat(alloc, "app/local/app.env", nil)
			if err := First(err, Expect(info != nil && info.Size == 10 && info.ContentType == "text/plain; charset=utf-8" && info.FileMode == "-rw-r--r--", "stat: %+v", info)); err != nil {
				return err
			}
			r, err := fs.Cat(alloc, "app/local/app.env", nil)
			if err != nil {
				return err
			}
			defer r.Close()
			body, err := io.ReadAll(r)
			if err := First(err, Expect(string(body) == "MODE=test\n", "cat: %q", body)); err != nil {
				return err
			}
			_, _, err = fs.List(alloc, "nope", nil)
			return Expect(err != nil && strings.Contains(err.Error(), "404") && strings.Contains(err.Error(), "no such file or directory"), "ls of a missing dir: %v", err)
		}},
		{"nomad-fs/logs-follow", func() error {
			if err := running(); err != nil {
				return err
			}
			cancel := make(chan struct{})
			defer close(cancel)
			frames, errs := c.AllocFS().Logs(alloc, true, "app", "stdout", "start", 0, cancel, nil)
			var seen strings.Builder
			if err := collect(frames, errs, &seen, "starting\n"); err != nil {
				return err
			}
			if err := Expect(seen.String() == "starting\n", "before the clock moves: %q", seen.String()); err != nil {
				return err
			}
			// The scripted lines come as the virtual clock passes their instants.
			if err := control.Advance("10s"); err != nil {
				return err
			}
			if err := collect(frames, errs, &seen, "ready\n"); err != nil {
				return err
			}
			// A line written now, through the control API.
			if _, err := control.Post("/_standin/actions", map[string]interface{}{"do": "task-log", "alloc": alloc.ID, "task": "app", "lines": []string{"GET /health 200"}}); err != nil {
				return err
			}
			if err := collect(frames, errs, &seen, "GET /health 200\n"); err != nil {
				return err
			}
			if err := control.Advance("10s"); err != nil {
				return err
			}
			if err := collect(frames, errs, &seen, "serving\n"); err != nil {
				return err
			}
			if err := Expect(seen.String() == "starting\nready\nGET /health 200\nserving\n", "log: %q", seen.String()); err != nil {
				return err
			}
			// The task ends: the stream ends with it.
			if _, err := control.Post("/_standin/actions", map[string]interface{}{"do": "alloc-complete", "alloc": alloc.ID}); err != nil {
				return err
			}
			ended := make(chan struct{})
			go func() {
				for range frames {
				}
				close(ended)
			}()
			return Within(ended, "end of the log stream after the task completed")
		}},
		{"nomad-fs/logs-errors", func() error {
			if err := running(); err != nil {
				return err
			}
			frames, errs := c.AllocFS().Logs(alloc, false, "nope", "stdout", "start", 0, nil, nil)
			select {
			case err := <-errs:
				return Expect(err != nil && strings.Contains(err.Error(), "400") && strings.Contains(err.Error(), `unknown task name "nope"`), "unknown task: %v", err)
			case <-frames:
				return fmt.Errorf("frames for an unknown task")
			case <-time.After(30 * time.Second):
				return fmt.Errorf("no answer for an unknown task")
			}
		}},
	}
}
