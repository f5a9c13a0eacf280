import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openSqliteReadModels } from '../src/infra/read-models/sqlite.js';
import { readModelContract } from './contracts/read-models.js';

const dir = mkdtempSync(join(tmpdir(), 'read-models-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

readModelContract(t, async () => openSqliteReadModels(dir));
