package gateway

import (
	"fmt"
	"path/filepath"
)

// NginxStandalone returns a minimal nginx.conf that runs the http-context
// lines body (an include of a bm2 gateway snippet, say) with everything
// nginx writes kept in dir: the temporary paths, and the access log
// (dir/access.log) when logFormat gives its format ("" turns it off).
// Start nginx with
//
//	nginx -p DIR -c DIR/nginx.conf -e stderr -g 'pid DIR/nginx.pid;'
//
// and it touches no root path: this is how the tests check every snippet
// with nginx -t, and how they run a gateway inside a test machine.
func NginxStandalone(dir, logFormat, body string) string {
	log := "access_log off;"
	if logFormat != "" {
		log = "log_format bm2 '" + logFormat + "';\n    access_log " + filepath.Join(dir, "access.log") + " bm2 buffer=64k flush=1s;"
	}
	return fmt.Sprintf(`worker_processes 1;
events {
    worker_connections 1024;
}
http {
    %s
    client_body_temp_path %s;
    proxy_temp_path %s;
    fastcgi_temp_path %s;
    uwsgi_temp_path %s;
    scgi_temp_path %s;
%s
}
`, log, filepath.Join(dir, "body"), filepath.Join(dir, "proxy"), filepath.Join(dir, "fastcgi"),
		filepath.Join(dir, "uwsgi"), filepath.Join(dir, "scgi"), body)
}
