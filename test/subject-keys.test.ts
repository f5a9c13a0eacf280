import t from 'tap';
import { openSqliteSubjectKeys } from '../src/infra/subject-keys/sqlite.js';
import { openMongoSubjectKeys } from '../src/infra/subject-keys/mongo.js';
import { subjectKeyContract } from './contracts/subject-keys.js';
import { tempDir } from './support/services.js';

subjectKeyContract(t, async () => openSqliteSubjectKeys(tempDir(t)));

const url = process.env.MONGODB_URL;
if (url) subjectKeyContract(t, () => openMongoSubjectKeys(url));
else t.comment('MongoDB subject keys skipped: MONGODB_URL is not set, so there is no MongoDB server to run the contract against');
