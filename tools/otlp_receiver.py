#!/usr/bin/env python3
"""An OTLP/HTTP receiver for the tests (php/tests/TelemetryTest.php).

Decodes what it receives with OpenTelemetry's own Python protobuf classes
(the opentelemetry-proto package; tools/deps.sh installs it under
target/otlp-python) and appends it to a file, one JSON object per line:
a span (name, kind, ids, parent, links, attributes, status, service) or a
metric point (name, unit, attributes, count or value).

    otlp_receiver.py OUT    listens on a free loopback port, prints it,
                            and serves until killed.
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'target', 'otlp-python'))

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2  # noqa: E402
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: E402

KINDS = {0: 'unspecified', 1: 'internal', 2: 'server', 3: 'client', 4: 'producer', 5: 'consumer'}
LOCK = threading.Lock()


def value(v):
    """An AnyValue as JSON."""
    kind = v.WhichOneof('value')
    if kind == 'array_value':
        return [value(x) for x in v.array_value.values]
    if kind == 'bytes_value':
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def spans(request):
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    'type': 'span',
                    'service': resource.get('service.name'),
                    'scope': ss.scope.name,
                    'name': s.name,
                    'kind': KINDS.get(s.kind, s.kind),
                    'trace_id': s.trace_id.hex(),
                    'span_id': s.span_id.hex(),
                    'parent_span_id': s.parent_span_id.hex(),
                    'links': [{'trace_id': l.trace_id.hex(), 'span_id': l.span_id.hex()} for l in s.links],
                    'attributes': attributes(s.attributes),
                    'status': {'code': s.status.code, 'message': s.status.message},
                    'duration_ns': s.end_time_unix_nano - s.start_time_unix_nano,
                }


def points(request):
    for rm in request.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof('data')
                for p in getattr(m, kind).data_points:
                    point = {'type': 'metric', 'name': m.name, 'unit': m.unit, 'kind': kind,
                             'attributes': attributes(p.attributes)}
                    if kind == 'histogram':
                        point['count'] = p.count
                    else:
                        point['value'] = p.as_int if p.WhichOneof('value') == 'as_int' else p.as_double
                    yield point


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        if self.path == '/v1/traces':
            request = trace_service_pb2.ExportTraceServiceRequest()
            request.ParseFromString(body)
            records, reply = list(spans(request)), trace_service_pb2.ExportTraceServiceResponse()
        elif self.path == '/v1/metrics':
            request = metrics_service_pb2.ExportMetricsServiceRequest()
            request.ParseFromString(body)
            records, reply = list(points(request)), metrics_service_pb2.ExportMetricsServiceResponse()
        else:
            self.send_error(404)
            return
        with LOCK, open(sys.argv[1], 'a') as out:
            for record in records:
                out.write(json.dumps(record) + '\n')
        payload = reply.SerializeToString()
        self.send_response(200)
        self.send_header('Content-Type', 'application/x-protobuf')
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == '__main__':
    main()
