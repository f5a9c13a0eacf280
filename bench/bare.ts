/** The ceiling: fastify answering a fixed JSON body, nothing else. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { success: true, id: 'rsp_01JD0000000000000000000000' };
app.get('/', async () => body);
app.post('/', async () => body);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
